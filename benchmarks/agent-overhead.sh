#!/usr/bin/env bash
# Agent overhead on a real server: Netty's HTTP "Hello World" example server under wrk load, in
# three modes run interleaved (none, jfr, profold, none, jfr, profold, ...) for ROUNDS rounds:
#   none     no agent
#   jfr      JFR alone at default settings (-XX:StartFlightRecording, default.jfc, disk with maxsize)
#   profold  the Profold agent (client-lib/target/profold-agent.jar) pushing to a real collector
#            (collector/target/profold.jar) started once for the whole run on free ports
# Each run starts a fresh server JVM, warms it up with wrk for WARMUP seconds, then measures
# DURATION seconds with `wrk --latency`. Per mode it reports the median requests/s, the spread
# (min-max), the median p99 latency, the throughput loss against no agent and, for Profold, the
# difference to JFR alone in points. Writes a markdown report to stdout and to
# benchmarks/target/agent-overhead/<UTC time>/results.md, next to the raw wrk outputs and logs.
#
# Run from the repository root after building the jars:
#   mvn -B -q package -DskipTests -DskipITs
#   benchmarks/agent-overhead.sh
# The server's class path comes from benchmarks/agent-overhead/pom.xml (Maven resolves
# io.netty:netty-example once; set MVN_ARGS=-o to stay offline when it is already there).
#
# LOAD=open replaces wrk's measured run by a fixed-rate (open-loop) load of RATE requests per second
# (OpenLoopLoad.java, next to this script): every mode then serves the same requests, and the
# server's CPU time per request, not its throughput, shows what an agent costs. Keep RATE well
# under the server's capacity without an agent (wrk's req/s in a LOAD=wrk run). The warm-up then
# ends with OPEN_WARMUP seconds of the same fixed-rate load, since the JIT compiles that load's
# paths anew after wrk's. Each measured run also splits the server's CPU time by thread (from
# /proc/<pid>/task/*/schedstat, in nanoseconds) into classes: app (the server's own threads),
# jvm (GC and VM housekeeping), jit (C1/C2 compiler threads), jfr (JFR's threads: sampler,
# recorder, periodic tasks) and agent (the Profold agent's threads, profold-*, its gRPC and Netty
# ones included; grpc-* for builds before they were named), so what the agent's own threads cost
# is read exactly, apart from the noisier
# application threads.
#
# PAIRED=1 (implies LOAD=open) compares within one server JVM instead of across JVMs, since most
# of the spread is between JVMs: each run warms a server without any agent, measures phase A,
# then adds its mode to the running JVM (none: nothing, the control for drift; jfr: `jcmd
# JFR.start` with JFR_OPTS; profold: the agent loaded through the attach API), warms again and
# measures phase B. A mode's cost is its mean B/A ratio of server CPU per request minus the
# control's.
#
# Environment (defaults in brackets):
#   ROUNDS [5]  DURATION [30] measured seconds per run  WARMUP [30] seconds per run (always wrk)
#   LOAD [wrk] wrk or open  RATE [40000] requests per second (LOAD=open)
#   OPEN_WARMUP [20] seconds of the fixed-rate load after wrk's warm-up (LOAD=open)
#   CONNECTIONS [50]  THREADS [1] (wrk)  SERVER_CPU [1]  CLIENT_CPU [0] (wrk and the collector)
#   SERVER_PORT [first free port from 8080]  SERVER_JVM_OPTS [] (all three modes)
#   JFR_OPTS [settings=default,disk=true,maxsize=64m]  AGENT_OPTS [] (appended to the agent's)
#   JAVA [java]  MVN [mvn]  MVN_ARGS []
set -euo pipefail

rounds=${ROUNDS:-5}
duration=${DURATION:-30}
warmup=${WARMUP:-30}
connections=${CONNECTIONS:-50}
load_kind=${LOAD:-wrk}
paired=${PAIRED:-0}
[ "$paired" = 1 ] && load_kind=open
rate=${RATE:-40000}
open_warmup=${OPEN_WARMUP:-20}
threads=${THREADS:-1}
server_cpu=${SERVER_CPU:-1}
client_cpu=${CLIENT_CPU:-0}
jfr_opts=${JFR_OPTS:-settings=default,disk=true,maxsize=64m}
agent_extra=${AGENT_OPTS:-}
java=${JAVA:-java}
mvn=${MVN:-mvn}
read -r -a server_jvm_opts <<<"${SERVER_JVM_OPTS:-}"
read -r -a mvn_args <<<"${MVN_ARGS:-}"

agent_jar=client-lib/target/profold-agent.jar
collector_jar=collector/target/profold.jar
workload_pom=benchmarks/agent-overhead/pom.xml
main_class=io.netty.example.http.helloworld.HttpHelloWorldServer
modes=(none jfr profold)

die() {
  echo "agent-overhead: $*" >&2
  exit 2
}

[[ $load_kind =~ ^(wrk|open)$ ]] || die "LOAD must be wrk or open, was '$load_kind'"
for n in rounds duration warmup connections threads rate open_warmup; do
  [[ ${!n} =~ ^[1-9][0-9]*$ ]] || die "${n^^} must be a positive integer, was '${!n}'"
done
[ -f "$workload_pom" ] || die "run from the repository root ($workload_pom not found)"
command -v wrk >/dev/null || die "wrk not found on PATH: install it (Debian/Ubuntu: apt-get install wrk)"
command -v "$java" >/dev/null || die "java not found (JAVA=$java)"
for jar in "$agent_jar" "$collector_jar"; do
  [ -f "$jar" ] || die "missing $jar: build it first with: mvn -B -q package -DskipTests -DskipITs"
done
command -v curl >/dev/null || die "curl not found (needed to read the collector's /metrics)"

if command -v taskset >/dev/null; then
  pinned=yes
  server_pin=(taskset -c "$server_cpu")
  client_pin=(taskset -c "$client_cpu")
else
  pinned=no
  server_pin=()
  client_pin=()
  echo "agent-overhead: taskset not found: server, wrk and collector are NOT pinned" >&2
fi

out=benchmarks/target/agent-overhead/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

# --- processes we start, stopped on any exit ---------------------------------------------------
server_pid=
collector_pid=
stop() { # pid: TERM, then KILL after 15 s
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  [ -n "$server_pid" ] && stop "$server_pid"
  [ -n "$collector_pid" ] && stop "$collector_pid"
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # first port from $1 nothing listens on
  local p=$1
  while listening "$p"; do
    p=$((p + 1))
    [ "$p" -lt $(($1 + 200)) ] || die "no free port from $1"
  done
  echo "$p"
}
await_port() { # port pid what: wait up to 60 s for pid to listen on port
  for _ in $(seq 600); do
    listening "$1" && return 0
    kill -0 "$2" 2>/dev/null || die "$3 exited before listening on port $1 (see $out)"
    sleep 0.1
  done
  die "$3 did not listen on port $1 within 60 s (see $out)"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # utime + stime of a process
cpu_stat() { # ticks of a CPU: not idle (user, nice, system, irq, softirq, steal) and idle (with iowait)
  if [ "$pinned" = yes ] && [[ $1 =~ ^[0-9]+$ ]]; then # a single CPU; lists (2-3) are not read
    awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat
  else
    echo 0 0
  fi
}

# --- workload class path -----------------------------------------------------------------------
echo "resolving the server's class path ($workload_pom)" >&2
"$mvn" -B -q "${mvn_args[@]}" -f "$workload_pom" dependency:build-classpath \
  -Dmdep.outputFile="$PWD/$out/classpath.txt" >"$out/mvn.log" 2>&1 ||
  die "could not resolve io.netty:netty-example with Maven (see $out/mvn.log)"
classpath=$(cat "$out/classpath.txt")

# --- collector, once for the whole run ---------------------------------------------------------
grpc_port=$(free_port $((20000 + RANDOM % 20000)))
http_port=$(free_port $((grpc_port + 1)))
"${client_pin[@]}" "$java" -jar "$collector_jar" collector \
  --grpc-port "$grpc_port" --http-port "$http_port" >"$out/collector.log" 2>&1 &
collector_pid=$!
await_port "$grpc_port" "$collector_pid" collector
await_port "$http_port" "$collector_pid" collector

server_port=${SERVER_PORT:-$(free_port 8080)}
listening "$server_port" && die "port $server_port is already in use (set SERVER_PORT)"
url=http://127.0.0.1:$server_port/
wrk_args=(-t "$threads" -c "$connections" --latency)

mode_flags() { # mode round
  case $1 in
    none) ;;
    jfr) echo "-XX:StartFlightRecording=$jfr_opts" ;;
    profold)
      local o="endpoint=127.0.0.1:$grpc_port,service=agent-overhead,instance=round-$2"
      echo "-javaagent:$agent_jar=$o${agent_extra:+,$agent_extra}"
      ;;
  esac
}

to_ms() { # wrk duration (12.3us, 4.5ms, 1.2s, 1.1m) -> milliseconds
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    f = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : -1
    if (f < 0) { print "NaN"; exit 1 } printf "%.3f", n * f }'
}

clk_tck=$(getconf CLK_TCK)
runs=$out/runs.tsv
printf 'round\tmode\treq_per_s\tp50_ms\tp99_ms\trequests\terrors\tserver_jvm\tothers\tserver_idle\tclient_idle\tload1\tserver_cpu_s\tapp_s\tjvm_s\tjit_s\tjfr_s\tagent_s\n' >"$runs"

if [ "$load_kind" = open ]; then # compiled once, so no run pays for it
  mkdir -p "$out/load"
  javac=$(dirname "$(command -v "$java")")/javac
  "$javac" -d "$out/load" benchmarks/agent-overhead/OpenLoopLoad.java \
    benchmarks/agent-overhead/AttachAgent.java ||
    die "could not compile benchmarks/agent-overhead/*.java (a JDK's javac is needed)"
fi
warm() { # tag: wrk for WARMUP seconds, then (LOAD=open) the fixed-rate load for OPEN_WARMUP
  "${client_pin[@]}" wrk "${wrk_args[@]}" -d "${warmup}s" "$url" >"$out/$1-warmup.txt"
  if [ "$load_kind" = open ]; then
    "${client_pin[@]}" "$java" -cp "$out/load" OpenLoopLoad 127.0.0.1 "$server_port" "$rate" \
      "$open_warmup" "$connections" >"$out/$1-warmup-load.txt"
  fi
}
thread_class() { # thread name (as /proc shows it, at most 15 characters) -> class
  case $1 in
    profold-* | grpc-*) echo agent ;;
    JFR\ *) echo jfr ;;
    C1\ CompilerThre* | C2\ CompilerThre*) echo jit ;;
    VM\ Thread | VM\ Periodic\ Tas* | GC\ Thread* | G1\ * | Sweeper\ thread | Monitor\ Deflati* | \
      Service\ Thread | Signal\ Dispatch* | Finalizer | Reference\ Handl* | Common-Cleaner | \
      Notification\ Th* | Attach\ Listener | Cleaner-*) echo jvm ;;
    *) echo app ;;
  esac
}
thread_cpu() { # pid: one line per thread: id, class, nanoseconds on CPU so far
  local t comm ns rest
  for t in /proc/"$1"/task/*; do
    read -r comm <"$t/comm" 2>/dev/null || continue
    read -r ns rest <"$t/schedstat" 2>/dev/null || continue
    printf '%s\t%s\t%s\n' "${t##*/}" "$(thread_class "$comm")" "$ns"
  done
}
class_cpu() { # before after: seconds on CPU per class between two thread_cpu snapshots, in the
  # order app jvm jit jfr agent (a thread started in between counts from zero; one that ended is
  # missed, which a server's long-lived threads never are)
  awk -F'\t' 'NR == FNR { before[$1] = $3; next }
    { c[$2] += $3 - ($1 in before ? before[$1] : 0) }
    END { printf "%.4f %.4f %.4f %.4f %.4f\n", c["app"] / 1e9, c["jvm"] / 1e9, c["jit"] / 1e9, c["jfr"] / 1e9, c["agent"] / 1e9 }' "$1" "$2"
}
measure() { # tag: the measured run, its output in $out/$tag-wrk.txt or $out/$tag-load.txt
  if [ "$load_kind" = open ]; then
    "${client_pin[@]}" "$java" -cp "$out/load" OpenLoopLoad 127.0.0.1 "$server_port" "$rate" \
      "$duration" "$connections" >"$out/$1-load.txt"
  else
    "${client_pin[@]}" wrk "${wrk_args[@]}" -d "${duration}s" "$url" >"$out/$1-wrk.txt"
  fi
}

# --- paired runs: one server JVM per run, phase A without anything, phase B with the mode ------
jit_ticks() { # ticks of a process's JIT compiler threads (their names start C1/C2 CompilerThre)
  local t comm sum=0
  for t in /proc/"$1"/task/*; do
    read -r comm <"$t/comm" 2>/dev/null || continue
    case $comm in
      C1\ CompilerThre* | C2\ CompilerThre*)
        sum=$((sum + $(sed 's/.*) //' "$t/stat" | awk '{ print $12 + $13 }'))) ;;
    esac
  done
  echo "$sum"
}
server_cpu_of() { # pid tag: server CPU µs per request over one open-loop run, all and without JIT
  local t0 t1 j0 j1 ok
  t0=$(cpu_ticks "$1")
  j0=$(jit_ticks "$1")
  measure "$2"
  t1=$(cpu_ticks "$1")
  j1=$(jit_ticks "$1")
  ok=$(tr ' ' '\n' <"$out/$2-load.txt" | awk -F= '$1 == "ok" { print $2 }')
  awk -v t=$((t1 - t0)) -v j=$((j1 - j0)) -v hz="$clk_tck" -v ok="$ok" \
    'BEGIN { printf "%.4f %.4f\n", t / hz * 1e6 / ok, (t - j) / hz * 1e6 / ok }'
}
if [ "$paired" = 1 ]; then
  pairs=$out/pairs.tsv
  printf 'round\tmode\tus_per_request_a\tus_per_request_b\tratio\tno_jit_a\tno_jit_b\tno_jit_ratio\n' >"$pairs"
  for round in $(seq "$rounds"); do
    for mode in "${modes[@]}"; do
      tag=r$round-$mode
      "${server_pin[@]}" "$java" "${server_jvm_opts[@]}" -Dport="$server_port" \
        -cp "$classpath" "$main_class" >"$out/$tag-server.log" 2>&1 &
      server_pid=$!
      await_port "$server_port" "$server_pid" "server ($mode)"
      warm "$tag-a"
      read -r a an < <(server_cpu_of "$server_pid" "$tag-a")
      case $mode in
        jfr)
          read -r -a jfr_args <<<"${jfr_opts//,/ }"
          "$(dirname "$(command -v "$java")")/jcmd" "$server_pid" JFR.start "${jfr_args[@]}" \
            >"$out/$tag-attach.txt" 2>&1 || die "jcmd JFR.start failed (see $out/$tag-attach.txt)" ;;
        profold)
          o="endpoint=127.0.0.1:$grpc_port,service=agent-overhead,instance=round-$round"
          "${client_pin[@]}" "$java" -cp "$out/load" AttachAgent "$server_pid" "$PWD/$agent_jar" \
            "$o${agent_extra:+,$agent_extra}" >"$out/$tag-attach.txt" 2>&1 ||
            die "could not attach the agent (see $out/$tag-attach.txt)" ;;
      esac
      warm "$tag-b"
      read -r b bn < <(server_cpu_of "$server_pid" "$tag-b")
      stop "$server_pid"
      server_pid=
      ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')
      ratio_n=$(awk -v a="$an" -v b="$bn" 'BEGIN { printf "%.4f", b / a }')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$a" "$b" "$ratio" "$an" "$bn" "$ratio_n" >>"$pairs"
      printf 'round %d %-7s A %7.2f µs/request, B %7.2f, B/A %s; without JIT threads %s\n' "$round" "$mode" \
        "$a" "$b" "$ratio" "$ratio_n" >&2
    done
  done
  stop "$collector_pid"
  collector_pid=
  {
    echo "## Agent overhead, paired within one server JVM (fixed $rate req/s)"
    echo
    echo "- Date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) CPUs online; load: \`OpenLoopLoad ... $rate $duration $connections\`"
    echo "- Per run: warm-up (wrk ${warmup}s, then the fixed rate ${open_warmup}s), phase A ${duration}s, the mode added, the same warm-up, phase B ${duration}s"
    echo
    for col in 5 8; do
    [ "$col" = 8 ] && echo && echo "The same without the JIT compiler threads' CPU (compiling the agent's code after it is loaded):" && echo
    echo "| mode | runs | B/A mean | standard error | cost vs control (points) |"
    echo "|---|---:|---:|---:|---:|"
    awk -F'\t' -v c="$col" 'NR > 1 { n[$2]++; s[$2] += $c; q[$2] += $c * $c; if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } }
      END {
        for (i = 1; i <= k; i++) { m = order[i]; mu[m] = s[m] / n[m]
          se[m] = n[m] > 1 ? sqrt((q[m] - n[m] * mu[m] * mu[m]) / (n[m] - 1) / n[m]) : 0 }
        for (i = 1; i <= k; i++) { m = order[i]
          printf "| %s | %d | %.4f | %.4f | %s |\n", m == "none" ? "none (control)" : m, n[m], mu[m], se[m],
            m == "none" ? "–" : sprintf("%+.2f ± %.2f", 100 * (mu[m] - mu["none"]), 100 * sqrt(se[m] ^ 2 + se["none"] ^ 2)) }
      }' "$pairs"
    done
    echo
    echo "| round | mode | A µs/request | B µs/request | B/A | B/A without JIT threads |"
    echo "|---:|---|---:|---:|---:|---:|"
    awk -F'\t' 'NR > 1 { printf "| %s | %s | %.2f | %.2f | %.4f | %.4f |\n", $1, $2, $3, $4, $5, $8 }' "$pairs"
  } | tee "$out/results.md"
  echo "agent-overhead: results in $out/results.md" >&2
  exit 0
fi

# --- interleaved runs --------------------------------------------------------------------------
for round in $(seq "$rounds"); do
  for mode in "${modes[@]}"; do
    tag=r$round-$mode
    read -r -a flags <<<"$(mode_flags "$mode" "$round")"
    "${server_pin[@]}" "$java" "${server_jvm_opts[@]}" "${flags[@]}" -Dport="$server_port" \
      -cp "$classpath" "$main_class" >"$out/$tag-server.log" 2>&1 &
    server_pid=$!
    await_port "$server_port" "$server_pid" "server ($mode)"

    warm "$tag"
    load=$(cut -d' ' -f1 /proc/loadavg)
    thread_cpu "$server_pid" >"$out/$tag-threads-before.tsv"
    t0=$(cpu_ticks "$server_pid")
    read -r sb0 si0 < <(cpu_stat "$server_cpu")
    read -r cb0 ci0 < <(cpu_stat "$client_cpu")
    measure "$tag"
    t1=$(cpu_ticks "$server_pid")
    thread_cpu "$server_pid" >"$out/$tag-threads-after.tsv"
    read -r c_app c_jvm c_jit c_jfr c_agent < <(class_cpu "$out/$tag-threads-before.tsv" "$out/$tag-threads-after.tsv")
    read -r sb1 si1 < <(cpu_stat "$server_cpu")
    read -r cb1 ci1 < <(cpu_stat "$client_cpu")
    stop "$server_pid"
    server_pid=
    if [ "$mode" = profold ]; then # the agent sends its last delta at shutdown; the collector
      sleep 2                      # forgets sources that stopped a few intervals ago
      curl -fsS "http://127.0.0.1:$http_port/metrics" >"$out/$tag-metrics.txt" ||
        die "could not read the collector's /metrics"
    fi

    if [ "$load_kind" = open ]; then
      f=$out/$tag-load.txt
      field() { tr ' ' '\n' <"$f" | awk -F= -v k="$1" '$1 == k { print $2 }'; }
      rps=$(field rate)
      p50=$(field p50_ms)
      p99=$(field p99_ms)
      requests=$(field ok)
      errors=$(field errors)
    else
      f=$out/$tag-wrk.txt
      rps=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
      p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$f")")
      p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$f")")
      requests=$(awk '/requests in/ { print $1 }' "$f")
      errors=$(awk '/Socket errors:/ { gsub(/,/, ""); e += $4 + $6 + $8 + $10 }
                    /Non-2xx/ { e += $NF } END { print e + 0 }' "$f")
    fi
    [ -n "$rps" ] || die "no Requests/sec in $f"
    # Shares of the measured run's time (pinned): of the server's CPU, the server JVM, everything
    # else that kept it busy (other processes, interrupts not charged to the server) and idle; the
    # client CPU's idle share. Not pinned: the server JVM's cores only.
    read -r jvm others sidle cidle < <(awk -v t=$((t1 - t0)) -v sb=$((sb1 - sb0)) -v si=$((si1 - si0)) \
      -v cb=$((cb1 - cb0)) -v ci=$((ci1 - ci0)) -v hz="$clk_tck" -v d="$duration" -v pinned="$pinned" 'BEGIN {
        if (sb + si == 0 || cb + ci == 0) { printf "%.3f n/a n/a n/a\n", t / (hz * d); exit }
        f = sb + si; printf "%.3f %.3f %.3f %.3f\n", t / f, (sb - t) / f, si / f, ci / (cb + ci) }')
    server_cpu_s=$(awk -v t=$((t1 - t0)) -v hz="$clk_tck" 'BEGIN { printf "%.2f", t / hz }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$rps" "$p50" "$p99" \
      "$requests" "$errors" "$jvm" "$others" "$sidle" "$cidle" "$load" "$server_cpu_s" \
      "$c_app" "$c_jvm" "$c_jit" "$c_jfr" "$c_agent" >>"$runs"
    printf 'round %d %-7s %6.0f req/s  p99 %7.3f ms  server JVM %s, others %s, idle %s / %s  load %s\n' \
      "$round" "$mode" "$rps" "$p99" "$jvm" "$others" "$sidle" "$cidle" "$load" >&2
  done
done

stop "$collector_pid"
collector_pid=

# --- report ------------------------------------------------------------------------------------
report() {
  local jvm
  jvm=$("${server_pin[@]}" "$java" "${server_jvm_opts[@]}" -XX:+PrintCommandLineFlags -version 2>&1)
  echo "## Agent overhead: Netty HttpHelloWorldServer under wrk"
  echo
  echo "- Date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) CPUs online; $(uname -sr)"
  echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
  if [ "$pinned" = yes ]; then
    echo "- Pinned with taskset: server on CPU $server_cpu; wrk and the collector on CPU $client_cpu"
  else
    echo "- Not pinned (taskset not found)"
  fi
  echo "- Server: \`$main_class\` (io.netty:netty-example), a fresh JVM per run"
  echo "- JVM (as the server sees it):"
  echo '  ```'
  echo "  ${jvm//$'\n'/$'\n'  }"
  echo '  ```'
  [ ${#server_jvm_opts[@]} -gt 0 ] && echo "- Extra server JVM options: \`${server_jvm_opts[*]}\`"
  if [ "$load_kind" = open ]; then
    echo "- Load: \`OpenLoopLoad 127.0.0.1 $server_port $rate $duration $connections\` (a fixed $rate req/s over" \
      "$connections connections) after \`wrk ${wrk_args[*]} -d ${warmup}s\` of warm-up;" \
      "$rounds rounds, modes interleaved in the order ${modes[*]}"
  else
    echo "- wrk: \`wrk ${wrk_args[*]} -d ${duration}s $url\` after \`-d ${warmup}s\` of warm-up;" \
      "$rounds rounds, modes interleaved in the order ${modes[*]}"
  fi
  echo "- jfr: \`$(mode_flags jfr 1)\`"
  echo "- profold: \`$(mode_flags profold N | sed 's/round-N$/round-<n>/')\`"
  echo
  echo "| mode | req/s median | req/s min–max | loss vs none | p99 median (ms) | p99 min–max (ms) | p50 median (ms) | server JVM CPU median | server CPU µs/request median | µs/request vs none | others on server CPU, median | errors |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' -v pinned="$pinned" -v open="$([ "$load_kind" = open ] && echo 1 || echo 0)" -v rate="$rate" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function minmax(a, n,   i, lo, hi) {
      lo = hi = a[1]; for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
      MIN = lo; MAX = hi
    }
    NR > 1 {
      m = $2; k = ++n[m]; rps[m, k] = $3; p99[m, k] = $5; p50[m, k] = $4; cpu[m, k] = $8; oth[m, k] = $9; err[m] += $7
      usr[m, k] = $13 * 1e6 / $6
      if (!(m in seen)) { seen[m] = 1; order[++modes] = m }
    }
    END {
      label["none"] = "no agent"; label["jfr"] = "JFR alone (default.jfc)"; label["profold"] = "Profold agent"
      for (i = 1; i <= modes; i++) {
        m = order[i]; c = n[m]
        for (k = 1; k <= c; k++) { a[k] = rps[m, k] } med[m] = median(a, c); minmax(a, c); lo[m] = MIN; hi[m] = MAX
        for (k = 1; k <= c; k++) { a[k] = p99[m, k] } q99[m] = median(a, c); minmax(a, c); q99lo[m] = MIN; q99hi[m] = MAX
        for (k = 1; k <= c; k++) { a[k] = p50[m, k] } q50[m] = median(a, c)
        for (k = 1; k <= c; k++) { a[k] = cpu[m, k] } ucpu[m] = median(a, c)
        for (k = 1; k <= c; k++) { a[k] = oth[m, k] } uoth[m] = median(a, c)
        for (k = 1; k <= c; k++) { a[k] = usr[m, k] } upr[m] = median(a, c)
      }
      for (i = 1; i <= modes; i++) {
        m = order[i]; loss[m] = 100 * (1 - med[m] / med["none"])
        printf "| %s | %.0f | %.0f–%.0f | %s | %.3f | %.3f–%.3f | %.3f | %.2f | %.2f | %s | %s | %d |\n", label[m], med[m],
          lo[m], hi[m], m == "none" ? "–" : sprintf("%.2f%%", loss[m]), q99[m], q99lo[m], q99hi[m], q50[m], ucpu[m],
          upr[m], m == "none" ? "–" : sprintf("%+.1f%%", 100 * (upr[m] / upr["none"] - 1)),
          pinned == "yes" ? sprintf("%.2f", uoth[m]) : "n/a", err[m]
      }
      if (open) {
        c = 100 * (upr["profold"] / upr["none"] - 1); d = c - 100 * (upr["jfr"] / upr["none"] - 1)
        printf "\nServer CPU per request of the Profold agent, at a fixed %s req/s: %+.2f%% vs no agent (goal ≤ 1%%: %s); ", rate, c,
          c <= 1 ? "met" : "NOT met"
        printf "%+.2f points vs JFR alone (goal ≤ +0.5: %s).\n", d, d <= 0.5 ? "met" : "NOT met"
      } else {
        d = loss["profold"] - loss["jfr"]
        printf "\nThroughput loss of the Profold agent: %.2f%% vs no agent (goal ≤ 1%%: %s); ", loss["profold"],
          loss["profold"] <= 1 ? "met" : "NOT met"
        printf "%+.2f points vs JFR alone (goal ≤ +0.5: %s).\n", d, d <= 0.5 ? "met" : "NOT met"
      }
    }' "$runs"
  echo
  echo "Server CPU per request by thread class (µs, median over the rounds; from each thread's"
  echo "schedstat run time over the measured run). app: the server's own threads; jvm: GC and VM"
  echo "housekeeping; jit: the C1/C2 compilers; jfr: JFR's threads; agent: the Profold agent's threads."
  echo "The last column is the mode's median minus no agent's, per class, app + jvm + jfr + agent."
  echo
  echo "| mode | app | jvm | jit | jfr | agent | all | all but jit | vs none, all but jit |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    NR > 1 {
      m = $2; k = ++n[m]; if (!(m in seen)) { seen[m] = 1; order[++modes] = m }
      for (c = 0; c < 5; c++) v[m, c, k] = $(14 + c) * 1e6 / $6
      v[m, 5, k] = ($14 + $15 + $16 + $17 + $18) * 1e6 / $6
      v[m, 6, k] = ($14 + $15 + $17 + $18) * 1e6 / $6
    }
    END {
      label["none"] = "no agent"; label["jfr"] = "JFR alone (default.jfc)"; label["profold"] = "Profold agent"
      for (i = 1; i <= modes; i++) { m = order[i]
        for (c = 0; c < 7; c++) { for (k = 1; k <= n[m]; k++) a[k] = v[m, c, k]; med[m, c] = median(a, n[m]) } }
      for (i = 1; i <= modes; i++) { m = order[i]
        d = 0; for (c = 0; c < 5; c++) if (c != 2) d += med[m, c] - med["none", c]
        printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", label[m], med[m, 0], med[m, 1], med[m, 2],
          med[m, 3], med[m, 4], med[m, 5], med[m, 6],
          m == "none" ? "–" : sprintf("%+.3f (%+.2f%%)", d, 100 * d / med["none", 6]) }
    }' "$runs"
  echo
  echo "Runs. CPU columns are shares of the measured run's time (1 = the whole CPU): of the server's"
  echo "CPU, the server JVM's user + system time, the time anything else kept it busy (other"
  echo "processes, interrupts not charged to the server) and its idle time; the client CPU's idle time."
  echo "Load: 1-minute load average before the run."
  echo
  echo "| round | mode | req/s | p50 (ms) | p99 (ms) | errors | server JVM | others on server CPU | server CPU idle | client CPU idle | load | µs/request: app | jvm | jit | jfr | agent |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' 'NR > 1 { r = 1e6 / $6; printf "| %s | %s | %.0f | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
    $1, $2, $3, $4, $5, $7, $8, $9, $10, $11, $12, $14 * r, $15 * r, $16 * r, $17 * r, $18 * r }' "$runs"
  echo
  echo "Collector check (what each agent run delivered, from the collector's /metrics right after"
  echo "the run; the agent's CPU is what it reported spending on itself over its whole run):"
  echo
  local r
  for r in $(seq "$rounds"); do
    awk -v round="$r" '
    !/service="agent-overhead"/ || $0 !~ ("instance=\"round-" round "\"") { if (!/^profold_deltas_applied_total/) next }
    /^profold_client_cpu_seconds_total\{/ { cpu = $NF }
    /^profold_region_time_seconds_count\{/ { series++ }
    /^profold_threads\{/ { groups++ }
    /^profold_deltas_applied_total/ { applied = $NF }
    END {
      if (!series && !groups) { printf "- round %d: NOTHING from this run reached the collector\n", round; exit }
      printf "- round %d: %d region-time series, %d thread groups; agent CPU %s s; deltas applied by the collector so far: %s\n",
        round, series, groups, cpu == "" ? "n/a" : cpu, applied
    }' "$out/r$r-profold-metrics.txt"
  done
}

report | tee "$out/results.md"
echo "agent-overhead: results in $out/results.md" >&2
