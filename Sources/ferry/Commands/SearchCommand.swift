import ArgumentParser
import FerryKit
import Foundation

struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the iTunes catalog for songs (or podcasts with --podcasts).",
        discussion: """
            Prints a numbered table; `ferry preview NUMBER` downloads that song's 30-second \
            preview into Music/, `ferry podcast add NUMBER` subscribes to that podcast. The \
            numbers refer to your latest search.
            """
    )

    @Argument(help: "What to search for.")
    var term: [String]

    @Flag(name: .long, help: "Search podcasts instead of songs.")
    var podcasts = false

    @Option(name: .long, help: "How many results (1-200).")
    var limit = 25

    @Option(name: .long, help: "The store's two-letter country code.")
    var country = "US"

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !term.joined().isEmpty else { throw ValidationError("Give something to search for.") }
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be between 1 and 200.") }
    }

    func run() async throws {
        try await Self.search(term.joined(separator: " "), podcasts: podcasts, limit: limit, country: country, json: output.json)
    }

    /// Searches, remembers the results for `preview N` / `podcast add N`, and prints them.
    static func search(_ term: String, podcasts: Bool, limit: Int, country: String, json: Bool) async throws {
        let client = try await CLIConnection.connect()
        let results = try await client.search(term, media: podcasts ? "podcast" : "music", limit: limit, country: country)
        try LastSearch.save(results)
        if json { return try FerryJSON.encoder(pretty: true).printing(results) }
        guard !results.isEmpty else { return Terminal.print("Nothing found for \"\(term)\".") }
        Terminal.print(table(results, width: Terminal.width))
    }

    /// `#  TITLE  ARTIST  COLLECTION  TIME`, with ✓ on downloaded songs and subscribed podcasts.
    static func table(_ results: [CatalogResult], width: Int) -> String {
        let header = ["#", "TITLE", "ARTIST", "COLLECTION", "TIME"]
        let rows = results.enumerated().map { index, result -> [String] in
            let mark = result.download?.state == .completed || result.podcastId != nil ? " ✓" : ""
            return [
                String(index + 1), Format.truncate(result.title, to: 40) + mark, Format.truncate(result.artist ?? "", to: 28),
                Format.truncate(result.kind == .podcast ? (result.genre ?? "") : (result.collection ?? ""), to: 30),
                Format.duration(result.durationSeconds),
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            Format.truncate(row.indices.map { Format.pad(row[$0], widths[$0]) }.joined(separator: "  "), to: max(width, 40))
        }.joined(separator: "\n")
    }
}

/// The latest search's results, so `ferry preview 3` means the third of them.
enum LastSearch {
    static var url: URL { CLIConnection.paths.state.appendingPathComponent("last-search.json") }

    static func save(_ results: [CatalogResult]) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FerryJSON.encoder().encode(results).write(to: url, options: .atomic)
    }

    /// The result numbered `number` (1-based) in the latest search, if there is one.
    static func result(_ number: Int) -> CatalogResult? {
        guard let data = FileManager.default.contents(atPath: url.path),
            let results = try? FerryJSON.decoder().decode([CatalogResult].self, from: data),
            results.indices.contains(number - 1)
        else { return nil }
        return results[number - 1]
    }
}

struct PreviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Download a song's 30-second preview into Music/ (as `Artist - Track.m4a`).",
        discussion: "Give a result number from your latest `ferry search`, or an iTunes track id."
    )

    @Argument(help: "A result number from `ferry search`, or a track id.")
    var song: Int64

    @Option(name: .long, help: "The session the download belongs to.")
    var session = "cli"

    @Flag(name: .long, help: "Start the download and return at once.")
    var noWait = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let trackId: Int64
        if song <= 200, let result = LastSearch.result(Int(song)) {
            guard result.kind == .song, let id = result.trackId else {
                throw FerryError.invalidRequest("Result \(song) (\(result.title)) is not a song; `ferry podcast add \(song)` subscribes to a podcast.")
            }
            trackId = id
        } else if song > 200 {
            trackId = song
        } else {
            throw FerryError.invalidRequest("There is no result \(song) in your latest search; run `ferry search TERM` first, or give a track id.")
        }
        let client = try await CLIConnection.connect()
        let transfer = try await client.downloadPreview(trackId: trackId, session: session)
        try await TransferFollower.report([transfer], wait: !noWait, json: output.json)
    }
}
