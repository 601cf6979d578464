#!/bin/sh
# Turns modules/<name> into git repositories repos/<name>, one commit and tag per release (see README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$here/repos"
release() { # name version [text]
  repo="$here/repos/$1"
  if [ ! -d "$repo" ]; then
    mkdir -p "$repo"
    git -C "$repo" init -q -b master
  fi
  cp -r "$here/modules/$1/." "$repo/"
  sed -i "s/^version: .*/version: $2/" "$repo/module.yml"
  if [ -f "$repo/model/_init.cf" ]; then sed -i "s/@VERSION@/$2/" "$repo/model/_init.cf"; fi
  git -C "$repo" add -A
  git -C "$repo" -c user.email=example@example.com -c user.name=example commit -q -m "release $2"
  git -C "$repo" tag "$2"
}
release greeting 1.0.0
release greeting 1.1.0
release greeting 2.0.0
release site 1.0.0
echo "repositories in $here/repos: greeting (1.0.0 1.1.0 2.0.0), site (1.0.0)"
