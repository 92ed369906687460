#!/usr/bin/env bash
# Installs the project's git hooks in this clone (also for its worktrees): commit-msg refuses a
# subject of 100 characters or more (scripts/check-commit-subjects.sh). Run once per clone.
set -eu
root=$(git rev-parse --show-toplevel)
hooks=$(git rev-parse --git-common-dir)/hooks
mkdir -p "$hooks"
cat > "$hooks/commit-msg" <<'HOOK'
#!/usr/bin/env bash
# Installed by scripts/install-hooks.sh: commit subjects under 100 characters.
exec bash "$(git rev-parse --show-toplevel)/scripts/check-commit-subjects.sh" --hook "$1"
HOOK
chmod +x "$hooks/commit-msg"
echo "install-hooks: $hooks/commit-msg checks each commit's subject (from $root)"
