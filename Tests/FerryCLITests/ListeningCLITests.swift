import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `ferry search`, `ferry preview` and `ferry podcast` with the real binary, a loopback catalog
/// (FERRY_CATALOG_URL) and a loopback origin for feeds and media.
@Suite(.serialized) struct ListeningCLITests {
    @Test func searchSubscribeRefreshDownloadEndToEnd() async throws {
        try await Origin.run { origin, base in
            let media = (1...3).map { n in
                let file = Origin.File(data: Origin.bytes(40_000 + n, seed: UInt64(n)), contentType: "audio/mpeg")
                origin.serve("/media/ep\(n).mp3", file)
                return file
            }
            let feed = TestFeed(
                title: "Night Shift",
                items: (1...3).reversed().map {
                    TestFeed.Item(guid: "g\($0)", title: "Part \($0)", published: "Fri, 0\($0) Mar 2024 06:00:00 GMT",
                                  enclosure: base.appendingPathComponent("media/ep\($0).mp3").absoluteString)
                }
            )
            origin.serve("/night.xml", .init(data: feed.data, etag: "\"n1\""))
            let catalogJSON = """
                {"resultCount":1,"results":[{"wrapperType":"track","kind":"podcast","collectionId":42424242,"trackId":42424242,
                "collectionName":"Night Shift","artistName":"Radio","primaryGenreName":"Music","feedUrl":"\(base.appendingPathComponent("night.xml").absoluteString)"}]}
                """
            try await CatalogServer.run { catalog, catalogURL in
                catalog.answer("/search", where: ["media": "podcast"], with: .body(catalogJSON))
                catalog.answer("/lookup", where: ["id": "42424242"], with: .body(catalogJSON))
                try await CommandRunner.withHome { home in
                    let env = ["FERRY_CATALOG_URL": catalogURL.absoluteString]
                    func ferry(_ arguments: String...) async throws -> CommandRunner.Output {
                        try await CommandRunner.ferry(arguments, home: home, extraEnvironment: env)
                    }
                    let search = try await ferry("podcast", "search", "night", "shift")
                    #expect(search.status == 0, "\(search)")
                    #expect(search.stdout.contains("Night Shift"))
                    #expect(search.stdout.split(separator: "\n").first?.contains("TITLE") == true)

                    let add = try await ferry("podcast", "add", "1")
                    #expect(add.status == 0, "\(add)")
                    #expect(add.stdout.contains("Subscribed to Night Shift (3 episodes)"))

                    let refresh = try await ferry("podcast", "refresh")
                    #expect(refresh.status == 0, "\(refresh)")
                    #expect(refresh.stdout.contains("0 new episodes"))

                    let episodes = try await ferry("podcast", "episodes", "night", "--json")
                    let list = try FerryJSON.decoder().decode([Episode].self, from: Data(episodes.stdout.utf8))
                    #expect(list.map(\.title) == ["Part 3", "Part 2", "Part 1"])

                    let download = try await ferry("podcast", "download", "night", String(list[0].id))
                    #expect(download.status == 0, "\(download)")
                    let path = home.appendingPathComponent("library/Podcasts/Night Shift/2024-03-03 Part 3.mp3").path
                    #expect(download.stdout.contains(path))
                    #expect(try Data(contentsOf: URL(fileURLWithPath: path)).sha256Hex == media[2].sha256)

                    let table = try await ferry("podcast", "episodes", "night")
                    #expect(table.stdout.split(separator: "\n").first?.contains("downloaded") == true)
                    let ls = try await ferry("podcast", "ls")
                    #expect(ls.stdout.contains("Night Shift — 3 episodes, 1 downloaded"))

                    // A serial at 1.5×, fetched every 15 minutes; then back to the daemon's hour.
                    let set = try await ferry("podcast", "set", "night", "--oldest-first", "--speed", "1.5", "--refresh", "15")
                    #expect(set.stdout == "Night Shift: auto-download 0, keep all, speed 1.5×, oldest first, refreshed every 15 min.\n", "\(set)")
                    let oldest = try await ferry("podcast", "episodes", "night", "--json")
                    #expect(try FerryJSON.decoder().decode([Episode].self, from: Data(oldest.stdout.utf8)).map(\.title) == ["Part 1", "Part 2", "Part 3"])
                    let back = try await ferry("podcast", "set", "night", "--no-oldest-first", "--refresh", "0")
                    #expect(back.stdout.contains("speed 1.5×, newest first, refreshed hourly"), "\(back)")
                    let tooOften = try await ferry("podcast", "set", "night", "--refresh", "5")
                    #expect(tooOften.status == 1 && tooOften.stderr.contains("refreshMinutes must be between 15 and 10080"), "\(tooOften)")

                    let export = try await ferry("podcast", "export")
                    #expect(export.stdout.contains("xmlUrl=\"\(base.appendingPathComponent("night.xml").absoluteString)\""))
                    let notOPML = home.appendingPathComponent("not.opml")
                    try Data("hello".utf8).write(to: notOPML)
                    let badImport = try await ferry("podcast", "import", notOPML.path)
                    #expect(badImport.status == 1)
                    #expect(badImport.stderr.hasPrefix("ferry: "))

                    // Bookmarks: added at a clock time, listed, a note changed, exported, removed.
                    let mark = try await ferry("bookmark", "add", String(list[1].id), "12:30", "--note", "the tide part", "--json")
                    #expect(mark.status == 0, "\(mark)")
                    let bookmark = try FerryJSON.decoder().decode(Bookmark.self, from: Data(mark.stdout.utf8))
                    #expect(bookmark.seconds == 750 && bookmark.title == "Part 2" && bookmark.showTitle == "Night Shift")
                    #expect(try await ferry("bookmark", "add", String(list[1].id), "1:02:03.5").stdout.contains("\t1:02:03\tNight Shift: Part 2"))
                    let listed = try await ferry("bookmark", "ls", "--episode", String(list[1].id))
                    #expect(listed.stdout.split(separator: "\n").map { $0.split(separator: "\t")[1] } == ["12:30", "1:02:03"], "\(listed)")
                    #expect(listed.stdout.contains("\tthe tide part"))
                    #expect(try await ferry("bookmark", "note", String(bookmark.id), "better words").stdout.hasSuffix("\tbetter words\n"))
                    let exported = try await ferry("podcast", "export", "--json")
                    #expect(try FerryJSON.decoder().decode(LibraryExport.self, from: Data(exported.stdout.utf8)).bookmarks.count == 2)
                    #expect(try await ferry("bookmark", "rm", String(bookmark.id)).status == 0)
                    let missing = try await ferry("bookmark", "rm", String(bookmark.id))
                    #expect(missing.status == 1 && missing.stderr.contains("There is no bookmark \(bookmark.id) of yours."), "\(missing)")
                    let badTime = try await ferry("bookmark", "add", String(list[1].id), "12:75")
                    #expect(badTime.status != 0 && badTime.stderr.contains("is not a time"), "\(badTime)")

                    // Playlists: made, filled, shown, reordered, an item moved to Up Next, renamed, deleted.
                    let (part3, part2, part1) = (String(list[0].id), String(list[1].id), String(list[2].id))
                    let made = try await ferry("playlist", "create", "road trip", "--episode", part1)
                    #expect(made.status == 0 && made.stdout.contains(", road trip."), "\(made)")
                    #expect(try await ferry("playlist", "add", "road trip", "--episode", part2).status == 0)
                    let added = try await ferry("playlist", "add", "road trip", "--episode", part3, "--json")
                    #expect(try FerryJSON.decoder().decode(Playlist.self, from: Data(added.stdout.utf8)).items.map(\.title) == ["Part 1", "Part 2", "Part 3"])
                    let ordered = try await ferry("playlist", "order", "road trip", "3", "1")
                    #expect(ordered.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: "\t")[2] } == ["Night Shift: Part 3", "Night Shift: Part 1", "Night Shift: Part 2"], "\(ordered)")
                    #expect(ordered.stdout.hasPrefix("road trip (playlist "), "\(ordered)")
                    let moved = try await ferry("playlist", "move", "--episode", part1, "road trip", "up-next")
                    #expect(moved.status == 0, "\(moved)")
                    #expect(try await ferry("playlist", "rm", "road trip", "--episode", part3).status == 0)
                    let shown = try await ferry("playlist", "show", "road trip")
                    #expect(shown.stdout.contains("1 item") && shown.stdout.contains("Part 2") && !shown.stdout.contains("Part 1"), "\(shown)")
                    #expect(try await ferry("playlist", "rename", "road trip", "long drive").stdout.contains("is long drive now"))
                    let playlists = try await ferry("playlist", "ls", "--json")
                    #expect(try FerryJSON.decoder().decode(PlaylistList.self, from: Data(playlists.stdout.utf8)).playlists.map(\.name) == ["long drive"])
                    let twice = try await ferry("playlist", "create", "long drive")
                    #expect(twice.status == 1 && twice.stderr.contains("already have a playlist named “long drive”"), "\(twice)")
                    let both = try await ferry("playlist", "add", "long drive", "--episode", part1, "--song", "5")
                    #expect(both.status != 0 && both.stderr.contains("--episode ID or --song ID"), "\(both)")
                    let nowhere = try await ferry("playlist", "show", "nowhere")
                    #expect(nowhere.status != 0 && nowhere.stderr.contains("no playlist named or numbered 'nowhere'"), "\(nowhere)")
                    #expect(try await ferry("playlist", "delete", "long drive").status == 0)
                    #expect(try await ferry("playlist", "ls").stdout.contains("No playlists yet"))
                    #expect(try await ferry("playlist", "--help").stdout.contains("ferry playlist move --episode 42 \"road trip\" up-next"))

                    let remove = try await ferry("podcast", "rm", "night")
                    #expect(remove.status == 0)
                    #expect(FileManager.default.fileExists(atPath: path), "episodes stay without --delete-files")
                }
            }
        }
    }

    /// `ferry podcast search-transcripts`: hits with their moment and the words marked, as JSON
    /// too; what is not a search is refused with the reason.
    @Test func searchWhatWasSaid() async throws {
        try await Origin.run { origin, base in
            origin.serve("/t/1.vtt", .init(data: Data("WEBVTT\n\n00:10:00.000 --> 00:10:04.000\n<v Vera>The word is Quasar.\n".utf8), contentType: "text/vtt"))
            origin.serve("/t/2.srt", .init(data: Data("1\n00:00:05,000 --> 00:00:07,000\nNo such word here.\n".utf8), contentType: "application/x-subrip"))
            let items = (1...2).map { n in
                """
                <item><guid>g\(n)</guid><title>Part \(n)</title><enclosure url="\(base.appendingPathComponent("media/\(n).mp3").absoluteString)" type="audio/mpeg"/>
                <podcast:transcript url="\(base.appendingPathComponent(n == 1 ? "t/1.vtt" : "t/2.srt").absoluteString)" type="\(n == 1 ? "text/vtt" : "application/x-subrip")"/></item>
                """
            }
            origin.serve("/stars.xml", .init(data: Data("""
                <?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Night Sky</title>
                \(items.joined())</channel></rss>
                """.utf8)))
            try await CommandRunner.withHome { home in
                func ferry(_ arguments: String...) async throws -> CommandRunner.Output { try await CommandRunner.ferry(arguments, home: home) }
                #expect(try await ferry("podcast", "add", base.appendingPathComponent("stars.xml").absoluteString).status == 0)
                try await eventually("both transcripts indexed", timeout: .seconds(60), poll: .milliseconds(200)) {
                    let json = try await ferry("podcast", "search-transcripts", "quasar", "--json")
                    return try FerryJSON.decoder().decode(TranscriptSearch.self, from: Data(json.stdout.utf8)).index.indexed == 2
                }
                let found = try await ferry("podcast", "search-transcripts", "QUASAR", "--podcast", "night")
                #expect(found.status == 0, "\(found)")
                #expect(found.stdout.contains("Night Sky — Part 1 (episode ") && found.stdout.contains(") at 10:00\n    Vera: The word is *Quasar*.\n"), "\(found.stdout)")
                #expect(found.stdout.hasSuffix("1 hit (2 episodes searched).\n"))
                let phrase = try await ferry("podcast", "search-transcripts", "\"such word\"", "--json")
                let hits = try FerryJSON.decoder().decode(TranscriptSearch.self, from: Data(phrase.stdout.utf8)).hits
                #expect(hits.map(\.seconds) == [5] && hits.first?.episodeTitle == "Part 2")
                #expect(try await ferry("podcast", "search-transcripts", "nebula").stdout == "Nothing found (2 episodes searched).\n")
                let empty = try await ferry("podcast", "search-transcripts", "?!")
                #expect(empty.status == 1 && empty.stderr.contains("Type a word to look for"), "\(empty)")
                let badLimit = try await ferry("podcast", "search-transcripts", "quasar", "--limit", "0")
                #expect(badLimit.status != 0 && badLimit.stderr.contains("--limit must be from 1 to 200"), "\(badLimit)")
                let help = try await ferry("podcast", "search-transcripts", "--help")
                #expect(help.stdout.contains("double quotes") && help.stdout.contains("Examples:"))
            }
        }
    }

    @Test func searchSongsAndDownloadAPreviewByResultNumber() async throws {
        try await Origin.run { origin, base in
            let preview = Origin.File(data: Origin.bytes(25_000), contentType: "audio/x-m4a")
            origin.serve("/p/one.m4a", preview)
            let song = """
                {"resultCount":1,"results":[{"wrapperType":"track","kind":"song","trackId":9000001,"collectionId":8000001,
                "trackName":"Blue / Green","artistName":"AC/DC","collectionName":"Colours","trackTimeMillis":"61000",
                "previewUrl":"\(base.appendingPathComponent("p/one.m4a").absoluteString)"}]}
                """
            try await CatalogServer.run { catalog, catalogURL in
                catalog.answer("/search", with: .body(song))
                catalog.answer("/lookup", with: .body(song))
                try await CommandRunner.withHome { home in
                    let env = ["FERRY_CATALOG_URL": catalogURL.absoluteString]
                    let search = try await CommandRunner.ferry(["search", "blue", "green"], home: home, extraEnvironment: env)
                    #expect(search.status == 0, "\(search)")
                    #expect(search.stdout.contains("Blue / Green"))
                    #expect(search.stdout.contains("1:01"))
                    let preview1 = try await CommandRunner.ferry(["preview", "1"], home: home, extraEnvironment: env)
                    #expect(preview1.status == 0, "\(preview1)")
                    let path = home.appendingPathComponent("library/Music/AC-DC - Blue - Green.m4a").path
                    #expect(preview1.stdout.contains(path))
                    #expect(try Data(contentsOf: URL(fileURLWithPath: path)).sha256Hex == preview.sha256)
                    let marked = try await CommandRunner.ferry(["search", "blue", "green"], home: home, extraEnvironment: env)
                    #expect(marked.stdout.contains("Blue / Green ✓"))
                    let missing = try await CommandRunner.ferry(["preview", "7"], home: home, extraEnvironment: env)
                    #expect(missing.status == 1)
                    #expect(missing.stderr.contains("no result 7"))
                }
            }
        }
    }
}
