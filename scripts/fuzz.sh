#!/usr/bin/env bash
# Fuzzes every parser of mcpcore that reads peer bytes (fuzz/fuzz_targets, cargo-fuzz + libFuzzer
# with AddressSanitizer), one target at a time.
#
#   scripts/fuzz.sh                  short mode: FUZZ_SECONDS (30) per target, as scripts/test.sh runs it
#   scripts/fuzz.sh --long [SECS]    SECS (600) per target, then writes fuzz/RESULTS.md
#   scripts/fuzz.sh [--long [SECS]] TARGET...   only those targets
#
# Seeds are fuzz/corpus/<target> (committed, never written to); what libFuzzer learns goes to a
# working corpus in the fuzz target dir, so later runs start from it. A crash, timeout, leak or
# out-of-memory input fails the script and its reproducer path is printed (replay it with
# `<binary> <path>`, or `cargo fuzz run <target> <path>` in fuzz/).
#
# Toolchain: cargo-fuzz needs `-Z sanitizer=address` and `-Z` flags are nightly-only. Only the
# stable toolchain exists here (no rust-toolchain.toml, see Cargo.toml), so the build sets
# RUSTC_BOOTSTRAP=1, which lets stable rustc accept them. It is scoped to this fuzz build, in its
# own target dir; the crates the workspace ships never build with it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=short
secs="${FUZZ_SECONDS:-30}"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --long)
      mode=long
      secs=600
      if [ $# -gt 1 ] && [[ "$2" =~ ^[0-9]+$ ]]; then secs="$2"; shift; fi
      ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ls fuzz/fuzz_targets | sed -n 's/\.rs$//p' | sort)
fi

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== installing cargo-fuzz (crates.io)"
  cargo install cargo-fuzz --locked
fi

# Beside the workspace's target dir (same disk, cached between runs), never inside it: the
# sanitizer flags would otherwise invalidate the workspace's own artifacts.
ws_target="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
fuzz_target_dir="${MCPCORE_FUZZ_TARGET_DIR:-$(dirname "$ws_target")/fuzz-target}"
triple=$(rustc -vV | sed -n 's/^host: //p')
# Short mode (the test command) builds unoptimised and without ASan: a cold optimised ASan build
# of every dependency took over an hour on a busy 2-core machine, while an unoptimised build
# takes minutes. core is `#![forbid(unsafe_code)]`, so a regression run rests on panics, the
# targets' own assertions, timeouts and the RSS cap; the long runs keep ASan and optimisation
# (leaks are reported only there). FUZZ_SANITIZER / FUZZ_PROFILE override either choice.
if [ "$mode" = long ]; then
  profile="${FUZZ_PROFILE:-release}"; sanitizer="${FUZZ_SANITIZER:-address}"
else
  profile="${FUZZ_PROFILE:-dev}"; sanitizer="${FUZZ_SANITIZER:-none}"
fi
if [ "$profile" = dev ]; then
  bin_dir="$fuzz_target_dir/$triple/debug"; profile_flag=(--dev)
else
  bin_dir="$fuzz_target_dir/$triple/release"; profile_flag=(--release)
fi
work="$fuzz_target_dir/work"

# FUZZ_SKIP_BUILD=1 runs the binaries of the last build as they are (replaying a corpus
# against an older build, or when another build of the same tree is still running).
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  echo "== cargo fuzz build ($profile, sanitizer $sanitizer; target dir $fuzz_target_dir)"
  (
    cd fuzz
    RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$fuzz_target_dir" cargo fuzz build --fuzz-dir . "${profile_flag[@]}" --sanitizer "$sanitizer"
  )
fi

# Short mode is a regression run inside the test command: a fixed mutation seed (FUZZ_SEED, 1)
# makes two runs of one tree try the same inputs, so a red test command means the tree changed,
# not that the dice did. Long mode explores with libFuzzer's random seed.
seed=()
if [ "$mode" = short ]; then seed=(-seed="${FUZZ_SEED:-1}"); fi
status=0
declare -A stats
for t in "${targets[@]}"; do
  bin="$bin_dir/$t"
  [ -x "$bin" ] || { echo "no fuzz target binary $bin" >&2; exit 2; }
  corpus="$work/corpus/$t"
  artifacts="$root/fuzz/artifacts/$t"
  log="$work/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  dict=()
  case "$t" in
    jsonrpc_frame|envelope|http_server|oauth_metadata|mcp_header|request_state) dict=(-dict="$root/fuzz/mcp.dict") ;;
  esac
  echo "== fuzz $t (${secs}s)"
  start=$(date +%s)
  rc=0
  # -timeout: one input may take 10 s (a hang is a bug); -rss_limit_mb: bounded memory;
  # -max_len: room for a few HTTP requests. ASan's leak check runs at exit.
  "$bin" "$corpus" "$root/fuzz/corpus/$t" "${dict[@]}" "${seed[@]}" \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  field() { sed -n "s/.* $1: \([0-9]*\).*/\1/p" <<<"$last"; }
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  nfiles=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$artifacts" -name 'crash-*' -newermt "@$start" | wc -l)
  timeouts=$(find "$artifacts" -name 'timeout-*' -newermt "@$start" | wc -l)
  leaks=$(find "$artifacts" -name 'leak-*' -newermt "@$start" | wc -l)
  ooms=$(find "$artifacts" -name 'oom-*' -newermt "@$start" | wc -l)
  stats[$t]="| $t | $took | ${execs:-?} | ${rate:-?} | $(field corp) ($nfiles new) | $(field cov) | $(field ft) | $crashes | $timeouts | $leaks | $ooms |"
  echo "   $took s, ${execs:-?} runs, ${rate:-?} exec/s, corpus $(field corp) ($nfiles new), cov $(field cov), ft $(field ft)"
  if [ "$rc" -ne 0 ] || [ $((crashes + timeouts + leaks + ooms)) -ne 0 ]; then
    status=1
    echo "!! $t failed (exit $rc); log: $log" >&2
    grep -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|ERROR: LeakSanitizer|panicked at|^SUMMARY' "$log" | head -5 >&2 || true
    for a in $(grep -o 'Test unit written to .*' "$log" | sed 's/Test unit written to //'); do
      echo "!! reproducer: $a (replay: $bin $a)" >&2
    done
  fi
done

if [ "$mode" = long ]; then
  out="$root/fuzz/RESULTS.md"
  {
    echo "# Fuzzing results"
    echo
    echo "Written by \`scripts/fuzz.sh --long $secs\` (libFuzzer + AddressSanitizer, one target at a time,"
    echo "each starting from its committed seeds and the working corpus of earlier runs)."
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(uname -sm)"
    echo "- toolchain: $(rustc --version) with RUSTC_BOOTSTRAP=1, $(cargo fuzz --version)"
    echo "- commit: $(git rev-parse --short HEAD)${FUZZ_SKIP_BUILD:+ (binaries of an earlier build: FUZZ_SKIP_BUILD)}"
    echo "- budget: $secs s per target (column *s*: seconds actually run)"
    echo
    echo "Coverage is libFuzzer's at the end of the run: *cov* = covered edges, *ft* = features."
    echo "Corpus = inputs libFuzzer holds at the end (seeds included), and how many of them the"
    echo "working corpus gained over all runs so far."
    echo
    echo "| target | s | executions | exec/s | corpus | cov | ft | crashes | timeouts | leaks | ooms |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for t in "${targets[@]}"; do echo "${stats[$t]}"; done
  } >"$out"
  echo "== wrote $out"
fi
[ $status -eq 0 ] && echo "== fuzz: no crash in ${#targets[@]} targets" || echo "== fuzz: FAILED" >&2
exit $status
