#!/usr/bin/env bash
# A throwaway single-node Ceph radosgw for Quiver's S3 integration tests.
#
#   bash test/s3/radosgw.sh start | stop | status
#
# Why radosgw: it is the only S3 server installable here (Debian package) that honours
# `If-None-Match: *` atomically, which Quiver's WAL and manifest fencing rely on.
# Topology and settings follow reference/toolchain.md §5.3: 1 mon, 1 memstore OSD (RAM-backed),
# `auth none`, beast frontend on 127.0.0.1. Everything lives in one data folder that `stop`
# removes; `start` writes `<dir>/env` with the endpoint and the fixed test credentials.
#
# Environment: QUIVER_S3_DIR (default <repo>/.s3), QUIVER_S3_PORT (default 7480),
# QUIVER_S3_MON_PORT (default 3300).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${QUIVER_S3_DIR:-$ROOT/.s3}
PORT=${QUIVER_S3_PORT:-7480}
MON_PORT=${QUIVER_S3_MON_PORT:-3300}
ACCESS_KEY=quiver-test
SECRET_KEY=quiver-test-secret
REGION=us-east-1
ENDPOINT=http://127.0.0.1:$PORT
CONF=$DIR/ceph.conf
# Daemon names as they appear in pid files (`pid file = run/$name.pid`), in stop order.
DAEMONS=(client.rgw.a osd.0 mon.a)

log() { printf 'radosgw [%2ds] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Every cluster call is bounded: with a bad config the ceph tools wait for a monitor forever.
ceph_() { timeout 30 ceph -c "$CONF" "$@"; }

pid_of() { # prints the pid of a daemon if its pid file names a live process
  local f=$DIR/run/$1.pid pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

answering() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; }

running() { pid_of client.rgw.a >/dev/null && answering; }

write_env() {
  cat >"$DIR/env" <<EOF
QUIVER_S3_ENDPOINT=$ENDPOINT
QUIVER_S3_ACCESS_KEY=$ACCESS_KEY
QUIVER_S3_SECRET_KEY=$SECRET_KEY
QUIVER_S3_REGION=$REGION
EOF
}

install() {
  command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null && return
  log "installing radosgw ceph-mon ceph-osd (apt, ~40 s)"
  export DEBIAN_FRONTEND=noninteractive
  local out
  out=$(mktemp)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends radosgw ceph-mon ceph-osd; } >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    die "apt-get install failed"
  fi
  rm -f "$out"
}

kill_daemons() {
  local name pid i
  for name in "${DAEMONS[@]}"; do
    pid=$(pid_of "$name") || continue
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  done
}

# Refuse to rm -rf a folder that is not ours (a mistyped QUIVER_S3_DIR must not wipe data).
wipe_dir() {
  [[ -e $DIR ]] || return 0
  if [[ -f $DIR/ceph.conf || -z $(ls -A "$DIR") ]]; then
    rm -rf "$DIR"
  else
    die "$DIR exists and is not a radosgw data folder (no ceph.conf); not removing it"
  fi
}

port_busy() { ss -Hltn "sport = :$1" | grep -q .; }

write_conf() {
  # `$name` and `$id` are ceph metavariables, expanded by the daemons, not by the shell.
  cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
# Without these, clients default to secure mode and hang for 300 s under auth none.
ms mon client mode = crc
ms client mode = crc
ms bind ipv6 = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 2147483648
run dir = $DIR/run
log file = $DIR/log/\$name.log
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
keyring = $DIR/keyring

[mon.a]
mon data = $DIR/mon/a

[osd]
osd data = $DIR/osd/\$id

[client.rgw.a]
# tcp_nodelay: without it every GET with a body waits ~40 ms on Nagle + delayed ACK.
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $DIR/rgw
EOF
}

start() {
  if [[ -d $DIR ]] && running; then
    write_env
    log "already running at $ENDPOINT; env in $DIR/env"
    return
  fi
  install
  # A previous run that crashed or was killed leaves daemons and a stale folder behind.
  if [[ -d $DIR ]]; then
    log "removing stale data folder $DIR"
    kill_daemons
    wipe_dir
  fi
  port_busy "$PORT" && die "port $PORT is in use by another process (set QUIVER_S3_PORT)"
  port_busy "$MON_PORT" && die "monitor port $MON_PORT is in use (another cluster? set QUIVER_S3_MON_PORT)"

  FSID=$(cat /proc/sys/kernel/random/uuid)
  mkdir -p "$DIR"/{mon/a,osd/0,rgw,run,log}
  write_conf

  log "creating monitor"
  timeout 30 ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  timeout 30 ceph-authtool "$DIR/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' >/dev/null
  timeout 30 ceph-authtool "$DIR/keyring" --gen-key -n client.rgw.a --cap mon 'allow rw' --cap osd 'allow rwx' >/dev/null
  timeout 30 monmaptool --create --addv a "[v2:127.0.0.1:$MON_PORT]" --fsid "$FSID" "$DIR/monmap" >/dev/null
  timeout 30 ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring" 2>>"$DIR/log/stderr.log"
  timeout 30 ceph-mon -c "$CONF" -i a 2>>"$DIR/log/stderr.log"

  log "creating OSD"
  local osd_uuid osd_id
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  osd_id=$(ceph_ osd new "$osd_uuid")
  [[ $osd_id == 0 ]] || die "expected OSD id 0, got '$osd_id'"
  # The daemons chat on stderr before detaching ("Falling back to public interface"); keep it in the log.
  timeout 60 ceph-osd -c "$CONF" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" 2>>"$DIR/log/stderr.log"
  timeout 30 ceph-osd -c "$CONF" -i "$osd_id" 2>>"$DIR/log/stderr.log"

  log "starting radosgw on $ENDPOINT"
  timeout 30 radosgw -c "$CONF" -n client.rgw.a 2>>"$DIR/log/stderr.log"
  local i
  for ((i = 0; i < 120; i++)); do answering && break; sleep 0.5; done
  answering || die "radosgw did not answer on $ENDPOINT within 60 s; see $DIR/log/"

  log "creating S3 user $ACCESS_KEY"
  timeout 60 radosgw-admin -c "$CONF" user create --uid=quiver-test --display-name=quiver-test \
    --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null
  write_env
  log "ready at $ENDPOINT; env in $DIR/env"
}

stop() {
  if [[ -d $DIR ]]; then
    log "stopping daemons"
    kill_daemons
    wipe_dir
  fi
  log "stopped"
}

status() {
  if [[ -d $DIR ]] && running; then
    echo "running at $ENDPOINT (rgw pid $(pid_of client.rgw.a)); env in $DIR/env"
  else
    echo "not running"
    return 3
  fi
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
