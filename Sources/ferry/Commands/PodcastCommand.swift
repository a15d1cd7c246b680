import ArgumentParser
import FerryFeeds
import FerryKit
import Foundation

struct PodcastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "podcast",
        abstract: "Subscribe to podcasts, list and download their episodes, keep them fresh.",
        discussion: """
            A PODCAST argument is the number `ferry podcast ls` shows, or a part of its title. \
            Episodes go to the library's Podcasts/<title>/ folder, named `2024-05-01 Title.mp3`. \
            The daemon refreshes every feed hourly.
            """,
        subcommands: [
            Add.self, Search.self, List.self, Episodes.self, Download.self, Refresh.self, Remove.self, Settings.self,
            Import.self, Export.self, SearchTranscripts.self,
        ]
    )

    /// Finds a podcast by id or by a part of its title.
    static func resolve(_ text: String, client: DaemonClient) async throws -> Podcast {
        let podcasts = try await client.podcasts()
        if let id = Int64(text), let podcast = podcasts.first(where: { $0.id == id }) { return podcast }
        let matches = podcasts.filter { $0.title.localizedCaseInsensitiveContains(text) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw FerryError(.notFound, "No subscription matches \"\(text)\"; `ferry podcast ls` lists them.")
        default:
            throw FerryError.invalidRequest(
                "\"\(text)\" matches \(matches.count) podcasts (\(matches.prefix(3).map(\.title).joined(separator: ", "))); use the number from `ferry podcast ls`."
            )
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Subscribe by feed URL, Apple Podcasts page URL, or a number from `ferry podcast search`.",
            discussion: """
                A private feed (HTTP Basic authentication) takes a user name and a password: \
                `--user NAME --password-stdin` reads the password from the first line of standard \
                input (echo … | or a prompt), or put both in the URL (https://name:password@host/feed). \
                They are sent for the feed and its episodes on the same host, and never shown again.
                """
        )

        @Argument(help: "A feed URL, an Apple Podcasts URL (…/id123456789), or a search result number.")
        var feed: String

        @Option(name: .long, help: ArgumentHelp("A private feed's user name.", valueName: "name"))
        var user: String?

        @Flag(name: .long, help: "Read the private feed's password from standard input (its first line).")
        var passwordStdin = false

        func validate() throws {
            if passwordStdin, user == nil { throw ValidationError("--password-stdin goes with --user NAME.") }
            if user != nil, !passwordStdin { throw ValidationError("With --user, give the password on standard input: --password-stdin.") }
        }

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let detail: PodcastDetail
            if let number = Int(feed), number <= 200, let result = LastSearch.result(number) {
                guard result.kind == .podcast, let id = result.collectionId ?? result.trackId else {
                    throw FerryError.invalidRequest("Result \(number) (\(result.title)) is not a podcast.")
                }
                detail = try await client.subscribe(catalogId: id)
            } else if let user {
                guard let password = readLine(strippingNewline: true) else {
                    throw ValidationError("--password-stdin found nothing on standard input.")
                }
                detail = try await client.subscribe(url: feed, user: user, password: password)
            } else {
                detail = try await client.subscribe(url: feed)
            }
            if output.json { return try FerryJSON.encoder(pretty: true).printing(detail.podcast) }
            let count = detail.episodes.count
            Terminal.print("Subscribed to \(detail.podcast.title) (\(count) episode\(count == 1 ? "" : "s")) as podcast \(detail.podcast.id).")
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "search", abstract: "Search the catalog for podcasts (same as `ferry search --podcasts`).")

        @Argument(help: "What to search for.")
        var term: [String]

        @Option(name: .long, help: "How many results (1-200).")
        var limit = 25

        @Option(name: .long, help: "The store's two-letter country code.")
        var country = "US"

        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await SearchCommand.search(term.joined(separator: " "), podcasts: true, limit: limit, country: country, json: output.json)
        }
    }

    struct SearchTranscripts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search-transcripts",
            abstract: "Find where your podcasts said something: each hit is an episode and the moment its line starts.",
            discussion: """
                Searches the transcripts of every episode of your podcasts that has one (the daemon \
                fetches and indexes them as episodes arrive). Every word must be in one line; put a \
                phrase in double quotes to find its words together and in order. Case and accents \
                do not matter.

                Examples:
                  ferry podcast search-transcripts quasar
                  ferry podcast search-transcripts '"dark matter" telescope' --podcast "Night Sky"
                  ferry podcast search-transcripts quasar --json | jq '.hits[0].seconds'

                Play a hit from its moment in the web app (`ferry open`), which lists the same hits.
                """
        )

        @Argument(help: "Words, and \"phrases\" in double quotes.")
        var words: [String]

        @Option(name: .long, help: "Only this podcast's episodes (number or part of its title).")
        var podcast: String?

        @Option(name: .long, help: "How many hits at most (1-\(TranscriptSearch.maximumHits)).")
        var limit = 20

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...TranscriptSearch.maximumHits).contains(limit) else {
                throw ValidationError("--limit must be from 1 to \(TranscriptSearch.maximumHits).")
            }
        }

        func run() async throws {
            let client = try await CLIConnection.connect()
            let podcastId = try await podcast.asyncMap { try await PodcastCommand.resolve($0, client: client).id }
            let search = try await client.searchTranscripts(words.joined(separator: " "), podcast: podcastId, limit: limit)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(search) }
            let index = search.index
            var coverage = "\(index.indexed) episode\(index.indexed == 1 ? "" : "s") searched"
            if index.pending > 0 { coverage += ", \(index.pending) waiting to be indexed" }
            if index.failed > 0 { coverage += ", \(index.failed) whose transcript could not be read" }
            guard !search.hits.isEmpty else { return Terminal.print("Nothing found (\(coverage)).") }
            // Marks stand out in a terminal, and as *words* in a pipe.
            let (open, close) = isatty(STDOUT_FILENO) == 1 ? ("\u{1B}[1m", "\u{1B}[22m") : ("*", "*")
            for hit in search.hits {
                let line = hit.snippet.map { $0.match ? open + $0.text + close : $0.text }.joined()
                Terminal.print("\(hit.podcastTitle) — \(hit.episodeTitle) (episode \(hit.episodeId)) at \(BookmarkCommand.clock(hit.seconds))")
                Terminal.print("    " + (hit.speaker.map { "\($0): " } ?? "") + line)
            }
            Terminal.print("\(search.hits.count) hit\(search.hits.count == 1 ? "" : "s") (\(coverage)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List subscriptions.")

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let podcasts = try await CLIConnection.connect().podcasts()
            if output.json { return try FerryJSON.encoder(pretty: true).printing(podcasts) }
            guard !podcasts.isEmpty else {
                return Terminal.print("No subscriptions. `ferry podcast add FEED_URL` or `ferry podcast search TERM`.")
            }
            for podcast in podcasts {
                var line = "\(Format.pad(String(podcast.id), 4)) \(podcast.title) — \(podcast.episodeCount) episodes"
                if podcast.newCount > 0 { line += ", \(podcast.newCount) new" }
                if podcast.downloadedCount > 0 { line += ", \(podcast.downloadedCount) downloaded" }
                if podcast.autoDownload > 0 { line += ", auto-downloads \(podcast.autoDownload)" }
                if let error = podcast.error { line += " (last refresh failed: \(error.message))" }
                Terminal.print(line)
            }
        }
    }

    struct Episodes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "episodes", abstract: "List a podcast's episodes, newest first, with their state.")

        @Argument(help: "The podcast (number or part of its title).")
        var podcast: String

        @Option(name: .long, help: "Show at most this many.")
        var limit = 30

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let detail = try await client.podcast(try await PodcastCommand.resolve(podcast, client: client).id)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(detail.episodes) }
            let width = Terminal.width
            for episode in detail.episodes.prefix(limit) {
                let date = episode.published.map { String($0.formatted(.iso8601).prefix(10)) } ?? "          "
                let state: String
                switch episode.state {
                case .downloaded: state = "downloaded"
                case .downloading: state = episode.transfer.map(Format.progress) ?? "downloading"
                case .paused: state = "paused " + (episode.transfer.map(Format.progress) ?? "")
                case .failed: state = "failed"
                case .notDownloaded: state = episode.isNew ? "new" : ""
                }
                let line = "\(Format.pad(String(episode.id), 6)) \(date)  \(Format.pad(Format.duration(episode.durationSeconds), 8)) \(Format.pad(state, 18)) \(episode.title)"
                Terminal.print(Format.truncate(line, to: max(width, 40)))
            }
            if detail.episodes.count > limit { Terminal.print("… \(detail.episodes.count - limit) more (--limit).") }
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download", abstract: "Download episodes (numbers from `ferry podcast episodes`), or the newest with --latest.")

        @Argument(help: "The podcast (number or part of its title).")
        var podcast: String

        @Argument(help: "Episode numbers as `ferry podcast episodes` shows them.")
        var episodes: [Int64] = []

        @Option(name: .long, help: "Download the newest N episodes instead.")
        var latest: Int?

        @Option(name: .long, help: "The session the downloads belong to.")
        var session = "cli"

        @Flag(name: .long, help: "Start the downloads and return at once.")
        var noWait = false

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !episodes.isEmpty || latest != nil else { throw ValidationError("Give episode numbers or --latest N.") }
            if let latest, latest < 1 { throw ValidationError("--latest must be at least 1.") }
        }

        func run() async throws {
            let client = try await CLIConnection.connect()
            let detail = try await client.podcast(try await PodcastCommand.resolve(podcast, client: client).id)
            var ids = episodes
            if let latest { ids += detail.episodes.prefix(latest).map(\.id) }
            for id in ids where !detail.episodes.contains(where: { $0.id == id }) {
                throw FerryError(.notFound, "\(detail.podcast.title) has no episode \(id); `ferry podcast episodes \(detail.podcast.id)` lists them.")
            }
            var transfers: [Transfer] = []
            for id in ids { transfers.append(try await client.downloadEpisode(id, session: session)) }
            try await TransferFollower.report(transfers, wait: !noWait, json: output.json)
        }
    }

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "refresh", abstract: "Fetch feeds now (all, or one podcast).")

        @Argument(help: "The podcast (number or part of its title); all when absent.")
        var podcast: String?

        func run() async throws {
            let client = try await CLIConnection.connect()
            let id = try await podcast.asyncMap { try await PodcastCommand.resolve($0, client: client).id }
            let result = try await client.refreshPodcasts(id)
            Terminal.print("Refreshed \(result.refreshed) podcast\(result.refreshed == 1 ? "" : "s"): \(result.newEpisodes) new episode\(result.newEpisodes == 1 ? "" : "s").")
            for failure in result.failures { Terminal.error("podcast \(failure.podcastId): \(failure.error.message)") }
            if !result.failures.isEmpty { throw ExitCode(1) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Unsubscribe. Downloaded episodes stay unless --delete-files.")

        @Argument(help: "The podcast (number or part of its title).")
        var podcast: String

        @Flag(name: .long, help: "Also delete the podcast's folder of episodes.")
        var deleteFiles = false

        func run() async throws {
            let client = try await CLIConnection.connect()
            let target = try await PodcastCommand.resolve(podcast, client: client)
            try await client.unsubscribe(target.id, deleteFiles: deleteFiles)
            Terminal.print("Unsubscribed from \(target.title)" + (deleteFiles ? " and deleted its episodes." : "."))
        }
    }

    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a podcast's auto-download, retention, speed, order, refresh interval and which files it downloads.",
            discussion: """
                Only what you name changes.
                  ferry podcast set jazz --auto-download 3 --keep 10
                  ferry podcast set serial --oldest-first --speed 1.5
                  ferry podcast set news --refresh 15     minutes between fetches (0: the daemon's hour)
                  ferry podcast set video --files smallest-audio
                When a feed offers an episode in several files (Podcasting 2.0 alternate enclosures), \
                --files picks which its downloads take: feed (the feed's own), smallest-audio \
                (lowest bitrate: for a data plan, or a video show heard only) or highest-quality \
                (of the feed's kind, audio or video). It is the household's: the file is shared.
                """
        )

        @Argument(help: "The podcast (number or part of its title).")
        var podcast: String

        @Option(name: .long, help: "Download the newest N episodes by themselves (0: never).")
        var autoDownload: Int?

        @Option(name: .long, help: "Keep only the newest N downloaded episodes (0: keep all).")
        var keep: Int?

        @Option(name: .long, help: ArgumentHelp("The player's speed for it, 0.5 to 3 (0: the player's own).", valueName: "x"))
        var speed: Double?

        @Flag(name: .long, inversion: .prefixedNo, help: "List its episodes oldest first (a serial).")
        var oldestFirst: Bool?

        @Option(name: .long, help: ArgumentHelp("Minutes between fetches of its feed, 15 to 10080 (0: the daemon's hour).", valueName: "minutes"))
        var refresh: Int?

        @Option(name: .long, help: ArgumentHelp("Which file downloads take when an episode offers several.", valueName: "feed|smallest-audio|highest-quality"))
        var files: EnclosureChoice?

        func run() async throws {
            let client = try await CLIConnection.connect()
            let target = try await PodcastCommand.resolve(podcast, client: client)
            let detail = try await client.updatePodcast(
                target.id,
                PodcastSettings(
                    autoDownload: autoDownload, keepLatest: keep, playbackSpeed: speed, oldestFirst: oldestFirst, refreshMinutes: refresh,
                    enclosureChoice: files
                )
            )
            let podcast = detail.podcast
            var parts = ["auto-download \(podcast.autoDownload)", "keep \(podcast.keepLatest.map(String.init) ?? "all")"]
            parts.append(podcast.playbackSpeed.map { "speed \($0.formatted())×" } ?? "the player's speed")
            parts.append(podcast.oldestFirst == true ? "oldest first" : "newest first")
            parts.append(podcast.refreshMinutes.map { "refreshed every \($0) min" } ?? "refreshed hourly")
            switch podcast.enclosureChoice ?? .feed {
            case .feed: break
            case .smallestAudio: parts.append("downloads the smallest audio")
            case .highestQuality: parts.append("downloads the highest quality")
            }
            Terminal.print("\(podcast.title): \(parts.joined(separator: ", ")).")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "Subscribe to every feed of an OPML file.")

        @Argument(help: "The OPML file.")
        var file: String

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw FerryError(.fileSystem, "Could not read \(file).")
            }
            let result = try await CLIConnection.connect().importOPML(data)
            Terminal.print("Subscribed to \(result.subscribed.count) podcast\(result.subscribed.count == 1 ? "" : "s").")
            for failure in result.failures { Terminal.error("\(failure.url): \(failure.error.message)") }
            if !result.failures.isEmpty { throw ExitCode(1) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Print every subscription as OPML (--json: with your bookmarks, as JSON).")

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            if output.json { return try FerryJSON.encoder(pretty: true).printing(try await client.exportLibrary()) }
            Terminal.print(try await client.exportOPML(), terminator: "")
        }
    }
}

extension EnclosureChoice: ExpressibleByArgument {}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        switch self {
        case .some(let value): try await transform(value)
        case .none: nil
        }
    }
}
