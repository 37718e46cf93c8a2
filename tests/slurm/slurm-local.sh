#!/usr/bin/env bash
# slurm-local.sh {start|stop|restart|status|env} — a one-node Slurm 22.05 (slurmctld +
# slurmd) with a private munged, on loopback, for Argus's SPANK integration tests
# (tests/slurm/). Written from the verified recipe in docs/SLURM_MPI.md.
# Idempotent; runs as root; everything lives under $SLURM_LOCAL_DIR; it stops only the
# daemons whose pids it recorded (never by name), cancelling jobs first because
# slurmstepd outlives slurmd. It must never touch the system's own Slurm or munge.
#   knobs: SLURM_LOCAL_DIR (/tmp/slurm-local), SLURM_LOCAL_CPUS (8, may exceed the real
#   cores: config_overrides), SLURM_LOCAL_PORT (6817; slurmd uses +1), SLURM_LOCAL_MPI (pmix)
#   clients: eval "$(slurm-local.sh env)"   (exports SLURM_CONF)
#   plugins: write lines into $SLURM_LOCAL_DIR/etc/plugstack.conf (re-read by every srun,
#   sbatch and slurmstepd, so no restart is needed for task-side plugin changes)
set -euo pipefail
D=${SLURM_LOCAL_DIR:-/tmp/slurm-local}
CPUS=${SLURM_LOCAL_CPUS:-8}          # advertised CPUs (> real cores is fine: config_overrides)
PORT=${SLURM_LOCAL_PORT:-6817}       # slurmctld port; slurmd uses PORT+1
MPI_DEFAULT=${SLURM_LOCAL_MPI:-pmix} # pmix is the only plugin that works with Debian's Open MPI 4.1
export SLURM_CONF=$D/etc/slurm.conf
MSOCK=$D/munge/munge.socket

die() { # die MSG -> print MSG and log tails, return 1
  echo "slurm-local: $1" >&2
  tail -n 30 "$D/log/slurmctld.log" "$D/log/slurmd.log" "$D/munge/munged.log" >&2 2>/dev/null || true
  return 1
}

alive() { # alive PIDFILE COMM -> 0 if pidfile names a live (non-zombie) process whose comm is COMM
  local p; [ -s "$1" ] || return 1; p=$(cat "$1")
  [ -r /proc/$p/stat ] && [ "$(cat /proc/$p/comm)" = "$2" ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$p/stat
}
gone() { [ ! -r /proc/$1/stat ] || grep -q '^[0-9]* ([^)]*) Z' /proc/$1/stat; }

write_conf() {
  mkdir -p "$D"/etc "$D"/state/ctld "$D"/state/d "$D"/log "$D"/run "$D"/munge
  chmod 755 "$D"/munge   # munged insists the socket dir is 0755, key 0600
  # TmpFS: the pmix plugin makes /tmp/spmix_appdir_<uid>_<job>.<step> under it; with the
  # default /tmp two clusters (or leftovers of an earlier one) with the same job ids
  # collide ("Cannot create client cli tmpdir ... File exists", task launch failed).
  mkdir -p "$D"/tmp; chmod 1777 "$D"/tmp
  cat > "$D/etc/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=localhost
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$D/state/ctld
SlurmdSpoolDir=$D/state/d
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$D/etc/plugstack.conf
TmpFS=$D/tmp
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=$MPI_DEFAULT
ReturnToService=2
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  # plugstack.conf is created empty once; tests append their own 'optional|required /path/x.so args' lines.
  [ -e "$D/etc/plugstack.conf" ] || : > "$D/etc/plugstack.conf"
}

port_busy() { grep -qiE ":$(printf %04X "$1") [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null; }

start() {
  write_conf
  if ! alive "$D/run/slurmctld.pid" slurmctld && port_busy "$PORT"; then
    die "port $PORT already in use (another slurmctld?); set SLURM_LOCAL_PORT" || return 1; fi
  if ! alive "$D/run/slurmd.pid" slurmd && port_busy $((PORT + 1)); then
    die "port $((PORT + 1)) already in use (another slurmd?); set SLURM_LOCAL_PORT" || return 1; fi
  if ! alive "$D/munge/munged.pid" munged; then
    [ -s "$D/munge/munge.key" ] || { mungekey -c -b 1024 -k "$D/munge/munge.key"; chmod 600 "$D/munge/munge.key"; }
    munged --socket="$MSOCK" --key-file="$D/munge/munge.key" --pid-file="$D/munge/munged.pid" \
           --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed" || die "munged failed" || return 1
  fi
  for i in $(seq 100); do munge -S "$MSOCK" -n </dev/null | unmunge -S "$MSOCK" >/dev/null 2>&1 && break; sleep 0.1; done
  munge -S "$MSOCK" -n </dev/null | unmunge -S "$MSOCK" >/dev/null 2>&1 || die "munged not answering" || return 1
  alive "$D/run/slurmctld.pid" slurmctld || slurmctld -c || die "slurmctld failed" || return 1  # -c: no old jobs
  alive "$D/run/slurmd.pid" slurmd || slurmd -N localhost || die "slurmd failed" || return 1
  local st=""
  for i in $(seq 300); do                                     # up to 30 s
    st=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
    [ "$st" = idle ] && break
    # both daemons fork before binding their ports, so a bind failure only shows up as a dead pid
    if [ "$i" -gt 10 ]; then alive "$D/run/slurmctld.pid" slurmctld || die "slurmctld died" || return 1
                             alive "$D/run/slurmd.pid" slurmd || die "slurmd died" || return 1; fi
    case $st in down*|drain*|fail*) scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true;; esac
    sleep 0.1
  done
  [ "$st" = idle ] || die "node not idle (state='$st')" || return 1
  echo "slurm-local: up (SLURM_CONF=$SLURM_CONF)"
}

stop() { # cancel jobs, TERM all three daemons by pid, wait (max 20 s), then KILL leftovers by pid
  local f c p i pids=()
  if alive "$D/run/slurmctld.pid" slurmctld && alive "$D/run/slurmd.pid" slurmd; then
    # slurmstepd (and the job's tasks) outlive slurmd, so end the jobs while the daemons can do it
    squeue -h -o %i | xargs -r scancel || true
    for i in $(seq 150); do                                   # up to 15 s
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && ! ls "$D"/state/d/localhost_* >/dev/null 2>&1 && break
      sleep 0.1
    done
  fi
  for f in run/slurmd.pid:slurmd run/slurmctld.pid:slurmctld munge/munged.pid:munged; do
    c=${f#*:}; f=$D/${f%%:*}
    if alive "$f" "$c"; then p=$(cat "$f"); kill -TERM "$p"; pids+=("$p"); fi
  done
  for i in $(seq 200); do
    local left=0; for p in "${pids[@]}"; do gone "$p" || left=1; done
    [ $left = 0 ] && break; sleep 0.1
  done
  for p in "${pids[@]}"; do gone "$p" || kill -KILL "$p" 2>/dev/null || true; done
  rm -f "$D"/run/*.pid "$D"/munge/munged.pid
  echo "slurm-local: stopped"
}

status() {
  local f c
  for f in munge/munged.pid:munged run/slurmctld.pid:slurmctld run/slurmd.pid:slurmd; do
    c=${f#*:}; f=$D/${f%%:*}
    if alive "$f" "$c"; then echo "$c running pid $(cat "$f")"; else echo "$c stopped"; fi
  done
  # sinfo blocks ~9 s retrying when slurmctld is down, so only ask a live controller
  if alive "$D/run/slurmctld.pid" slurmctld; then sinfo; fi
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  env) echo "export SLURM_CONF=$SLURM_CONF" ;;
  *) echo "usage: $0 {start|stop|restart|status|env}" >&2; exit 2 ;;
esac
