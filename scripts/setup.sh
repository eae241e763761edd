#!/usr/bin/env bash
# Installs what a fresh machine lacks for MainLoop: Debian's libevent-dev
# (the event loop), tzdata (zone files for the time-zone source and the
# demo) and systemd (systemd-socket-activate and systemd-analyze, which the
# socket-activation and unit-file tests run for real; nothing is started),
# python3-prometheus-client (the Prometheus project's own parser, which
# checks the metrics text the service writes), libsystemd-dev (sd-bus, the
# D-Bus client of the system-bus sources), and the D-Bus peers the tests
# run for real: dbus-daemon (a private system bus) and python3-dbusmock
# (the upower, iio-sensors-proxy and logind templates GNOME and systemd
# test their own clients with), and umockdev with its GObject bindings (a
# testbed /sys and uevents for the accessory and screen sources, as upower
# and iio-sensor-proxy test themselves). libuv1-dev and libglib2.0-dev are
# the loops the benchmarks measure MainLoop beside (Benchmarks/, never the
# package's products).
# Safe to run again: it installs only what is missing.
set -euo pipefail
missing=()
dpkg -s libevent-dev >/dev/null 2>&1 || missing+=(libevent-dev)
[ -e /usr/share/zoneinfo/Europe/Paris ] || missing+=(tzdata)
command -v systemd-socket-activate >/dev/null 2>&1 || missing+=(systemd)
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing+=(python3-prometheus-client)
dpkg -s libsystemd-dev >/dev/null 2>&1 || missing+=(libsystemd-dev)
[ -x /usr/bin/dbus-daemon ] || missing+=(dbus-daemon)
/usr/bin/python3 -c 'import dbusmock' 2>/dev/null || missing+=(python3-dbusmock)
[ -x /usr/bin/umockdev-wrapper ] || missing+=(umockdev)
/usr/bin/python3 -c "import gi; gi.require_version('UMockdev', '1.0')" 2>/dev/null || missing+=(gir1.2-umockdev-1.0 python3-gi)
dpkg -s libuv1-dev >/dev/null 2>&1 || missing+=(libuv1-dev)
dpkg -s libglib2.0-dev >/dev/null 2>&1 || missing+=(libglib2.0-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
