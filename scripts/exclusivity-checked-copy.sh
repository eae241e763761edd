#!/usr/bin/env bash
# Makes a copy of the package with every `@exclusivity(unchecked)` removed,
# so Swift's dynamic exclusivity checks run everywhere, and prints its path.
# The attribute skips the checks on the loop's hot fields, where the
# one-thread rule already guarantees exclusive access; CI's ThreadSanitizer
# step builds this copy, so an overlapping access the rule does not prevent
# fails a test there (a debug build traps on it) instead of going unseen.
#   bash scripts/exclusivity-checked-copy.sh [DIR]     (default .build-exclusivity/package)
set -euo pipefail
cd "$(dirname "$0")/.."
copy=${1:-.build-exclusivity/package}
rm -rf "$copy"
mkdir -p "$copy"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
  [ -e "$file" ] || continue
  mkdir -p "$copy/$(dirname "$file")"
  cp -p "$file" "$copy/$file"
done
# The attribute as written on a declaration (a space after it; comments
# quote it in backticks).
count=$(grep -rl --include='*.swift' '@exclusivity(unchecked) ' "$copy/Sources" | wc -l)
grep -rl --include='*.swift' '@exclusivity(unchecked) ' "$copy/Sources" | xargs -r sed -i 's/@exclusivity(unchecked) //g'
if grep -rq --include='*.swift' '@exclusivity(unchecked) ' "$copy/Sources"; then
  echo "error: an @exclusivity(unchecked) is left in the copy" >&2
  exit 1
fi
echo "exclusivity-checked copy: $count files changed" >&2
cd "$copy" && pwd
