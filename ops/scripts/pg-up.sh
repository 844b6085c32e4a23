#!/usr/bin/env bash
# Makes sure a PostgreSQL answers on 127.0.0.1:5432: when nothing does, start
# the machine's local cluster (installing the server first if it is missing).
# With DATABASE_URL pointing elsewhere there is nothing to do.
set -euo pipefail

if [ -n "${DATABASE_URL:-}" ] && [[ "$DATABASE_URL" != *"127.0.0.1:5432"* && "$DATABASE_URL" != *"localhost:5432"* ]]; then
  exit 0
fi
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  exit 0
fi
if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  echo "pg-up: no local PostgreSQL cluster; installing postgresql" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -V | tail -n 1)
conf=/etc/postgresql/$version/main
# Trust on loopback for the local development cluster only.
if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$conf/pg_hba.conf"
fi
echo "pg-up: starting PostgreSQL $version" >&2
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 60); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then exit 0; fi
  sleep 0.5
done
echo "pg-up: PostgreSQL did not answer on 127.0.0.1:5432" >&2
exit 1
