#!/usr/bin/env bash
# Commit subjects fit a line: under 100 characters (the summary; the detail goes in the body).
#   bash scripts/check-commit-subjects.sh            every commit after the boundary (3ac22f6,
#                                                    the last commit before the rule) up to HEAD
#   bash scripts/check-commit-subjects.sh --hook MSG the commit-msg hook's check of one message
#                                                    (bash scripts/install-hooks.sh installs it)
#   bash scripts/check-commit-subjects.sh --self-test
# Prints one line per subject too long and exits 1, or exits 0. Outside a git work tree (a
# tarball's build) or where the boundary is not in the history (a shallow clone), it says so and
# exits 77, which CTest (commit_subjects) reports as skipped. BOUNDARY=rev checks after another.
set -u
export LC_ALL=C.UTF-8  # ${#s} counts characters, not bytes
limit=100
self=$(readlink -f "$0")
boundary=${BOUNDARY:-3ac22f6}

too_long() {  # subject -> 0 when it has $limit characters or more
  [ "${#1}" -ge "$limit" ]
}

check_message() {  # the first line that is not a comment of a commit message file
  local subject
  subject=$(grep -v '^#' "$1" | sed -n '/[^[:space:]]/{p;q}')
  if too_long "$subject"; then
    echo "commit subject of ${#subject} characters, the limit is $((limit - 1)): put a summary" \
         "under $limit characters on the first line and the detail in the body after a blank line:"
    echo "  $subject"
    return 1
  fi
}

check_history() {
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "SKIPPED: not a git work tree (no history to check)"
    return 77
  fi
  if ! git cat-file -e "$boundary^{commit}" 2>/dev/null ||
     ! git merge-base --is-ancestor "$boundary" HEAD 2>/dev/null; then
    echo "SKIPPED: the boundary commit $boundary is not in this history (a shallow clone?)"
    return 77
  fi
  local bad=0 hash subject
  while IFS= read -r line; do
    hash=${line%% *}
    subject=${line#* }
    if too_long "$subject"; then
      echo "$hash: a subject of ${#subject} characters (the limit is $((limit - 1))): $subject"
      bad=1
    fi
  done < <(git log --no-merges --format='%h %s' "$boundary..HEAD")
  if [ "$bad" -ne 0 ]; then
    echo "reword them (git rebase -i $boundary, 'reword') before they land" \
         "on main; bash scripts/install-hooks.sh checks each commit as it is made"
  fi
  return "$bad"
}

self_test() {
  local dir fails=0 short long out rc
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  short="A short subject"
  long=$(printf 'x%.0s' $(seq 1 100))
  (
    cd "$dir" && git init -q && git config user.email t@t && git config user.name t &&
      git commit -q --allow-empty -m base && git tag base &&
      git commit -q --allow-empty -m "$short" &&
      git commit -q --allow-empty -m "$(printf 'y%.0s' $(seq 1 99))" -m "a body line that is far longer than the limit, which is fine: $long"
  ) || { echo "self-test: could not make a repository"; return 1; }
  out=$(cd "$dir" && BOUNDARY=base bash "$self"); rc=$?
  [ "$rc" -eq 0 ] || { echo "self-test: 99 characters and a long body refused: $out"; fails=1; }
  (cd "$dir" && git commit -q --allow-empty -m "$long")
  out=$(cd "$dir" && BOUNDARY=base bash "$self"); rc=$?
  [ "$rc" -eq 1 ] && [[ "$out" == *"100 characters"* ]] ||
    { echo "self-test: a subject of 100 characters passed: $out"; fails=1; }
  out=$(cd "$dir" && BOUNDARY=nosuchcommit bash "$self"); rc=$?
  [ "$rc" -eq 77 ] || { echo "self-test: a missing boundary did not skip (rc $rc)"; fails=1; }
  out=$(cd / && bash "$self"); rc=$?
  [ "$rc" -eq 77 ] || { echo "self-test: outside a work tree did not skip (rc $rc)"; fails=1; }
  printf '# a comment\n\n%s\n\nbody\n' "$long" > "$dir/msg"
  bash "$self" --hook "$dir/msg" >/dev/null && { echo "self-test: the hook passed 100 characters"; fails=1; }
  printf '%s\n\n%s\n' "$short" "$long" > "$dir/msg"
  bash "$self" --hook "$dir/msg" >/dev/null || { echo "self-test: the hook refused a short subject"; fails=1; }
  return "$fails"
}

case "${1:-}" in
  --hook) check_message "$2" ;;
  --self-test) self_test ;;
  ""|--ctest) check_history ;;
  *) echo "usage: $0 [--hook MESSAGE_FILE | --self-test]" >&2; exit 2 ;;
esac
