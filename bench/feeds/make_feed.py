#!/usr/bin/env python3
"""Writes a synthetic podcast feed with many episodes (RSS 2.0 + iTunes + Podcasting 2.0), shaped
like a long-running daily show: HTML show notes, enclosures, durations, seasons. Deterministic.

    make_feed.py OUT.xml [EPISODES]        (default 20000)
"""
import random
import sys
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from xml.sax.saxutils import escape

WORDS = ("ferry river harbour tide music jazz piano interview story week news morning city "
         "history science garden coffee archive lecture season guest live session notes").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rng = random.Random(20000)
    start = datetime(1970, 1, 1, 6, 0, tzinfo=timezone.utc) + timedelta(days=365 * 30)
    with open(out, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
                'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
                'xmlns:podcast="https://podcastindex.org/namespace/1.0">\n<channel>\n'
                '<title>The Long Ferry Show</title>\n<link>https://example.com/show</link>\n'
                '<language>en</language>\n<itunes:author>Ferry Bench</itunes:author>\n'
                '<description>A synthetic daily show for benchmarks.</description>\n'
                '<itunes:image href="https://example.com/show/cover.jpg"/>\n'
                '<itunes:category text="Music"/>\n<itunes:explicit>false</itunes:explicit>\n')
        for i in range(count, 0, -1):
            published = start + timedelta(days=i)
            title = escape(f"Episode {i}: {sentence(rng, 5)}")
            notes = "".join(f"<p>{sentence(rng, 12)} <a href=\"https://example.com/links/{i}/{k}\">link {k}</a></p>"
                            for k in range(3))
            seconds = rng.randint(600, 7200)
            f.write(
                f"<item>\n<title>{title}</title>\n"
                f"<guid isPermaLink=\"false\">long-ferry-show-{i}</guid>\n"
                f"<pubDate>{format_datetime(published)}</pubDate>\n"
                f"<link>https://example.com/show/{i}</link>\n"
                f"<description>{escape(sentence(rng, 20))}</description>\n"
                f"<content:encoded><![CDATA[{notes}]]></content:encoded>\n"
                f"<enclosure url=\"https://cdn.example.com/show/ep{i}.mp3\" length=\"{seconds * 16000}\" type=\"audio/mpeg\"/>\n"
                f"<itunes:duration>{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}</itunes:duration>\n"
                f"<itunes:season>{1 + i // 365}</itunes:season>\n<itunes:episode>{i}</itunes:episode>\n"
                f"<itunes:episodeType>full</itunes:episodeType>\n"
                f"<podcast:transcript url=\"https://example.com/show/{i}.vtt\" type=\"text/vtt\"/>\n"
                "</item>\n")
        f.write("</channel>\n</rss>\n")


if __name__ == "__main__":
    main()
