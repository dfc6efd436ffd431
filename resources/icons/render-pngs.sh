#!/usr/bin/env bash
# Renders the PNG sizes of the application icon from cuview.svg (rsvg-convert, Debian's
# librsvg2-bin). Run it after editing the SVG; the PNGs are committed so builds need no SVG tools.
set -euo pipefail
cd "$(dirname "$0")"
for s in 16 24 32 48 64 128 256; do rsvg-convert -w $s -h $s cuview.svg -o cuview-$s.png; done
