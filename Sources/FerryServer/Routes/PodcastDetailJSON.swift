import FerryKit
import Foundation
import NIOCore

/// A ``PodcastDetail`` as JSON, one episode at a time. JSONEncoder builds a tree of the whole
/// value before writing a byte: for a 20,000-episode podcast that tree was most of the daemon's
/// 131 MiB heap peak (heaptrack; bench/reports/2026-11-feeds.md, "A long feed in the daemon").
/// Here it holds one episode's tree at a time. The output is byte for byte what
/// `FerryJSON.encoder()` makes of the whole (its keys are sorted: `episodes` before `podcast`);
/// PodcastDetailJSONTests compares the two.
enum PodcastDetailJSON {
    static func encode(_ detail: PodcastDetail) throws -> ByteBuffer {
        let encoder = FerryJSON.encoder()
        var out = ByteBuffer()
        out.writeStaticString(#"{"episodes":["#)
        for (index, episode) in detail.episodes.enumerated() {
            if index > 0 { out.writeStaticString(",") }
            out.writeBytes(try encoder.encode(episode))
        }
        out.writeStaticString(#"],"podcast":"#)
        out.writeBytes(try encoder.encode(detail.podcast))
        out.writeStaticString("}")
        return out
    }
}
