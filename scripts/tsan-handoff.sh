#!/usr/bin/env bash
# Checks the two suppressions of scripts/tsan.supp that cover StarPU's unregister hand-off
# (race_top:pthread_mutex_init, race_top:pthread_cond_init; docs/reliability.md, "Sanitizer
# runs"), on a small program that forces that hand-off:
#   bash scripts/tsan-handoff.sh
# starpu_data_unregister initialises a mutex and a condition variable on its caller's stack and,
# when the handle is still held, queues them in the handle's requester list under the handle's
# header lock; the thread that releases the handle runs StarPU's callback, which locks that mutex
# and signals. StarPU's header lock is its own compare-and-swap and futex, which TSan does not see
# in an uninstrumented StarPU (1.3 from Debian): it reports the lock against the initialisation.
# The program holds the handle (an acquisition without sequential consistency, so the unregister
# does not wait for it), holds the main thread back at its first lock of a mutex on its stack
# inside starpu_data_unregister until another thread has released the handle and locked that
# mutex, and keeps its own hand-shake out of TSan's sight. Three runs, each must hand over:
#   StarPU 1.3 without the two lines: the report (the program reaches the hand-off);
#   StarPU 1.3 with tsan.supp: no report;
#   StarPU 1.4 built with TSan (deps/starpu-1.4-tsan, from TSAN_STARPU=1 scripts/tsan.sh; skipped
#   when absent), StarPU's own reports kept: none located on the main thread's stack (TSan sees
#   the header lock's atomics, which order the hand-off).
# Prints one line per run and exits 0 when all hold, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tsan-handoff.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/handoff.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <starpu.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char *main_stack;
static pthread_t main_thread;
static volatile int in_unregister, stack_lock_seen, handed_over;
static starpu_data_handle_t h;

/* The hand-shake between the two threads, out of TSan's sight: no order it could see. */
__attribute__((no_sanitize_thread)) static void set(volatile int *p) { *p = 1; }
__attribute__((no_sanitize_thread)) static int get(volatile int *p) { return *p; }
static void pause_ms(int ms) {
  struct timespec t = {0, ms * 1000000L};
  syscall(SYS_nanosleep, &t, NULL);
}
static int on_main_stack(const void *p) {
  const char *c = p;
  return c < main_stack && c > main_stack - (8 << 20);
}

int pthread_mutex_lock(pthread_mutex_t *m) {
  static int (*real)(pthread_mutex_t *);
  if (!real) real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  if (get(&in_unregister) && on_main_stack(m)) {
    if (pthread_equal(pthread_self(), main_thread)) {
      set(&stack_lock_seen);
      for (int i = 0; i < 5000 && !get(&handed_over); i++) pause_ms(1);
    } else {
      set(&handed_over); /* StarPU's callback, on the releasing thread */
    }
  }
  return real(m);
}

static void acquired(void *arg) { (void)arg; }

static void *releaser(void *arg) {
  (void)arg;
  for (int i = 0; i < 5000 && !get(&stack_lock_seen); i++) pause_ms(1);
  starpu_data_release(h);
  return NULL;
}

int main(void) {
  char here;
  main_stack = &here + 4096;
  main_thread = pthread_self();
  if (starpu_init(NULL) != 0) return 77;
  static double x[16];
  starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)x, 16, sizeof(double));
  starpu_data_acquire_on_node_cb_sequential_consistency(h, STARPU_MAIN_RAM, STARPU_W, acquired,
                                                        NULL, 0);
  pthread_t t;
  pthread_create(&t, NULL, releaser, NULL);
  set(&in_unregister);
  starpu_data_unregister(h);
  pthread_join(t, NULL);
  printf("handed over: %s\n", get(&handed_over) ? "yes" : "no");
  starpu_shutdown();
  return 0;
}
EOF
cflags=(-O1 -g -fsanitize=thread -fno-omit-frame-pointer)
# shellcheck disable=SC2046  # pkg-config's flags, split on spaces
gcc "${cflags[@]}" "$work/handoff.c" $(pkg-config --cflags --libs starpu-1.3) -ldl -o "$work/h13"
grep -v -E '^race_top:pthread_(mutex|cond)_init$' "$root/scripts/tsan.supp" > "$work/without.supp"
export STARPU_SILENT=1 STARPU_NCPU=2
status=0
run() {  # name, program, suppressions, what must hold ("reports" or "none" or "none on stack")
  local out=$work/$1.out n
  TSAN_OPTIONS=suppressions=$3:halt_on_error=0:history_size=7 "$2" > "$out" 2>&1 || true
  n=$(grep -c 'WARNING: ThreadSanitizer' "$out" || true)
  local stack
  stack=$(grep -c 'Location is stack of main thread' "$out" || true)
  local ok=yes
  grep -q 'handed over: yes' "$out" || ok="no (no hand-off)"
  case $4 in
    reports) [ "$stack" -ge 1 ] || ok=no ;;
    none) [ "$n" = 0 ] || ok=no ;;
    "none on stack") [ "$stack" = 0 ] || ok=no ;;
  esac
  echo "tsan-handoff: $1: $n reports, $stack on the main thread's stack; expected $4: $ok"
  [ "$ok" = yes ] || { status=1; grep -A12 'WARNING: ThreadSanitizer' "$out" | head -n 40; }
}
run "StarPU 1.3, tsan.supp without the two lines" "$work/h13" "$work/without.supp" reports
run "StarPU 1.3, tsan.supp" "$work/h13" "$root/scripts/tsan.supp" none
prefix=$root/deps/starpu-1.4-tsan
if [ -f "$prefix/lib/pkgconfig/starpu-1.4.pc" ]; then
  gcc "${cflags[@]}" "$work/handoff.c" -I"$prefix/include/starpu/1.4" -L"$prefix/lib" \
    -Wl,-rpath,"$prefix/lib" -lstarpu-1.4 -ldl -o "$work/h14"
  { grep -v -E 'starpu_|^race_top:pthread_(mutex|cond)_init$' "$root/scripts/tsan.supp"
    grep -v '^race_top:libstarpu' \
    "$root/scripts/tsan-starpu.supp"; } > "$work/starpu14.supp"
  run "StarPU 1.4 with TSan, its own reports kept" "$work/h14" "$work/starpu14.supp" "none on stack"
else
  echo "tsan-handoff: no $prefix (TSAN_STARPU=1 bash scripts/tsan.sh builds it): 1.4 skipped"
fi
exit $status
