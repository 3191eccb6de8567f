#!/usr/bin/env bash
# Builds pgvector from the source release kept in this repository (vendor/pgvector-0.8.1.tar.gz, PostgreSQL
# License, see vendor/README.md) and installs it into the machine's PostgreSQL, for every installed server
# major version whose extension directory lacks a pgvector new enough for memory recall. Debian 12 packages
# no pgvector, so this is how the CI machine (and a Debian operator without PGDG's apt repository) gets it.
#
# Idempotent and quick: when the extension files are already there it only reads two files and exits.
# Building needs Debian's postgresql-server-dev-<major>, make and gcc; they are installed when missing.
# Needs root to install (apt-get, make install).
#
# Usage: scripts/install-pgvector.sh [--check]
#   --check   exit 1 (and say which) if a PostgreSQL lacks pgvector; install nothing.
#   PG_MAJOR=15 limits it to one server major version (default: every one under /usr/lib/postgresql).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
version=0.8.1
# Memory recall needs hnsw.iterative_scan, new in pgvector 0.8.0 (requiresVersion in src/core/db/migration-sets.ts).
minimum=0.8.0
tarball="$repo/vendor/pgvector-$version.tar.gz"
check_only=false
[ "${1:-}" = "--check" ] && check_only=true

# "a >= b" for dotted versions.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

if [ -n "${PG_MAJOR:-}" ]; then
  majors=("$PG_MAJOR")
else
  mapfile -t majors < <(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -V)
fi
if [ ${#majors[@]} -eq 0 ]; then
  echo "install-pgvector: no PostgreSQL server found under /usr/lib/postgresql" >&2
  exit 1
fi

# The extension is usable when its control file (Debian: /usr/share/postgresql/<major>/extension) names a new
# enough default version and its library is in the server's library directory.
installed_version() {
  local major=$1 control="/usr/share/postgresql/$1/extension/vector.control"
  [ -f "$control" ] && [ -f "/usr/lib/postgresql/$major/lib/vector.so" ] || return 0
  sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" "$control"
}

missing=()
for major in "${majors[@]}"; do
  have=$(installed_version "$major")
  if [ -n "$have" ] && version_ge "$have" "$minimum"; then
    echo "install-pgvector: PostgreSQL $major has pgvector $have"
  else
    missing+=("$major")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if $check_only; then
  echo "install-pgvector: pgvector >= $minimum missing for PostgreSQL ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-pgvector: installing pgvector into PostgreSQL ${missing[*]} needs root" >&2
  exit 1
fi
[ -f "$tarball" ] || { echo "install-pgvector: $tarball is missing" >&2; exit 1; }

apt_needed=()
for major in "${missing[@]}"; do
  dpkg -s "postgresql-server-dev-$major" >/dev/null 2>&1 || apt_needed+=("postgresql-server-dev-$major")
done
command -v make >/dev/null 2>&1 || apt_needed+=(make)
command -v gcc >/dev/null 2>&1 || apt_needed+=(gcc)
if [ ${#apt_needed[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${apt_needed[@]}" >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for major in "${missing[@]}"; do
  pg_config="/usr/lib/postgresql/$major/bin/pg_config"
  rm -rf "$work/pgvector-$version"
  tar -xzf "$tarball" -C "$work"
  # OPTFLAGS="" builds for any x86-64 (no -march=native), as distribution packages do.
  make -s -j"$(nproc)" -C "$work/pgvector-$version" PG_CONFIG="$pg_config" OPTFLAGS="" >/dev/null
  make -s -C "$work/pgvector-$version" PG_CONFIG="$pg_config" install >/dev/null
  echo "install-pgvector: installed pgvector $version into PostgreSQL $major"
done
