#!/usr/bin/env bash
# Installs what a fresh machine lacks for MainLoop: Debian's libevent-dev
# (the event loop), tzdata (zone files for the time-zone source and the
# demo) and systemd (systemd-socket-activate and systemd-analyze, which the
# socket-activation and unit-file tests run for real; nothing is started),
# and python3-prometheus-client (the Prometheus project's own parser, which
# checks the metrics text the service writes).
# Safe to run again: it installs only what is missing.
set -euo pipefail
missing=()
dpkg -s libevent-dev >/dev/null 2>&1 || missing+=(libevent-dev)
[ -e /usr/share/zoneinfo/Europe/Paris ] || missing+=(tzdata)
command -v systemd-socket-activate >/dev/null 2>&1 || missing+=(systemd)
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing+=(python3-prometheus-client)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
