import ArgumentParser
import FerryKit
import Foundation

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Show or change a session's transfer options (headers, timeouts, limits, schedule).",
        discussion: """
            A session's options apply to its transfers; `get` and `put` options override them for \
            one transfer. The session named '*' is the daemon itself: its limits cover all \
            transfers together (`ferry session set '*' --limit-rate 5M`).
            """,
        subcommands: [SessionShowCommand.self, SessionSetCommand.self, SessionCookiesCommand.self, SessionForgetCommand.self]
    )
}

struct SessionForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "End a session for good: its unfinished transfers cancelled, its events and options deleted.",
        discussion: """
            For a program that will not come back (uninstalled): the daemon keeps a FerryKit \
            session's unacknowledged events for 90 days, waiting for it; this ends the wait now. \
            Its unfinished transfers are cancelled (their partial files deleted); finished ones \
            stay listed with their files.
              ferry session forget com.example.Downloader
            """
    )

    @Argument(help: "The session to forget.")
    var name: String

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard name != "*" else { throw ValidationError("'*' is the daemon itself; name a session.") }
    }

    func run() async throws {
        let client = try await CLIConnection.connect()
        let forgotten = try await client.forgetSession(name)
        if output.json { return try FerryJSON.encoder(pretty: true).printing(forgotten) }
        let cancelled = forgotten.cancelled.isEmpty ? "no unfinished transfers" : "cancelled \(forgotten.cancelled.count) unfinished (\(forgotten.cancelled.map(String.init).joined(separator: ", ")))"
        Terminal.print("Forgot session \(forgotten.name): \(forgotten.eventsDeleted) events deleted, \(cancelled).")
    }
}

struct SessionShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print a session's options (credentials shown as <redacted>).",
        discussion: """
            Shows the options `ferry session set` gave: headers, timeouts, limits, the folder, \
            hooks and notifications, and a bandwidth schedule's windows with what holds now and \
            until when. A transfer's own options (`ferry get`) are over these.
              ferry session show podcasts
              ferry session show '*'       the daemon's: all transfers together
            """
    )

    @Argument(help: "The session ('*' for the daemon's own).")
    var name = "cli"

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try await CLIConnection.connect()
        let options = name == "*" ? try await client.daemonConfiguration() : try await client.sessionConfiguration(name).options
        try SessionShowCommand.print(options, name: name, json: output.json)
    }

    static func print(_ options: TransferOptions, name: String, json: Bool) throws {
        if json { return try FerryJSON.encoder(pretty: true).printing(SessionConfiguration(session: name, options: options)) }
        Terminal.print("Session \(name == "*" ? "* (the daemon: all transfers together)" : name)")
        guard !options.isEmpty else { return Terminal.print("  (no options set: the defaults apply)") }
        for (header, value) in (options.headers ?? [:]).sorted(by: { $0.key < $1.key }) { Terminal.print("  header          \(header): \(value)") }
        if let value = options.connectTimeoutSeconds { Terminal.print("  connect timeout \(value) s") }
        if let value = options.idleTimeoutSeconds { Terminal.print("  idle timeout    \(value) s") }
        if let value = options.maxConcurrent { Terminal.print("  max concurrent  \(value)") }
        if let value = options.bytesPerSecond { Terminal.print("  rate limit      \(Format.bytes(value))/s") }
        if let value = options.startAfter { Terminal.print("  start after     \(ISO8601DateFormatter().string(from: value))") }
        if let value = options.maxRetries { Terminal.print("  max retries     \(value)") }
        if let value = options.proxy { Terminal.print("  proxy           \(value)") }
        if options.noProxy == true { Terminal.print("  proxy           none (direct connections)") }
        if let user = options.user { Terminal.print("  user            \(user)\(options.password.map { " (password \($0))" } ?? "")") }
        if let value = options.netrcFile { Terminal.print("  netrc           \(value)") }
        if options.authOverHTTP == true { Terminal.print("  logins over http allowed (from a .netrc or `ferry credentials`)") }
        if let value = options.resourceTimeoutSeconds { Terminal.print("  resource timeout \(DurationText.describe(.seconds(value)))") }
        if let value = options.connections { Terminal.print("  connections     \(value) per download") }
        if let value = options.maxConnectionsPerHost { Terminal.print("  per host        at most \(value) connections") }
        if let value = options.directory { Terminal.print("  folder          \(value)") }
        if let value = options.onComplete { Terminal.print("  on complete     \(value)") }
        if let value = options.onFail { Terminal.print("  on fail         \(value)") }
        if let value = options.notifyURL { Terminal.print("  notify URL      \(value)") }
        if options.desktopNotify == true { Terminal.print("  desktop notifications on") }
        if options.allowsMeteredNetwork == false { Terminal.print("  metered network waits (runs only on an unmetered route)") }
        if options.allowsMeteredNetwork == true { Terminal.print("  metered network allowed") }
        if options.discretionary == true { Terminal.print("  discretionary   runs only inside the daemon's schedule's windows") }
        if let names = options.meteredInterfaces { Terminal.print("  metered         \(names.isEmpty ? "(none named)" : names.joined(separator: ", "))") }
        if let schedule = options.schedule {
            for window in schedule.windows { Terminal.print("  during          \(Format.window(window))") }
            Terminal.print("  outside them    \(schedule.outside == .paused ? "paused" : "no limit")")
            let now = schedule.state(at: Date())
            let rate = now.paused ? "paused" : now.bytesPerSecond.map { "\(Format.bytes($0))/s" } ?? "no limit"
            let until = now.until.map { " until \(Format.clock($0))" } ?? ""
            Terminal.print("  now             \(rate)\(until)")
        }
    }
}

struct SessionSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Change a session's options; those not named stay as they are.",
        discussion: """
            Examples:
              ferry session set podcasts --header 'Cookie: …' --max-concurrent 2
              ferry session set cli --limit-rate 500k --at +1h
              ferry session set cli --clear bytesPerSecond --remove-header Cookie
              ferry session set work --dir ~/work/incoming
              ferry session set '*' --metered-interfaces wwan0 && ferry session set big --no-metered
              ferry session set '*' --during 'Mon-Sun 01:00-06:00' && ferry session set nightly --discretionary
              ferry session set '*' --limit-rate 2M --during 'Mon-Fri 09:00-18:00'
              ferry session set podcasts --during '01:00-07:00' --outside paused
              ferry session set '*' --on-complete 'cp "$FERRY_PATH" /backup/'
              ferry session set '*' --on-fail 'logger "ferry: $FERRY_ERROR"'
              ferry session set podcasts --notify-url http://127.0.0.1:9000/done
              ferry session set podcasts --desktop-notify

            Bandwidth by the clock: with --during (repeatable; days Mon..Sun such as Mon-Fri or \
            Sat,Sun, none for every day; times HH:MM in the daemon's time zone, 24:00 for \
            midnight, past midnight when the end comes first), --limit-rate holds inside the \
            windows, and outside them there is no limit (--outside unlimited, the default), or \
            with --outside paused nothing of the session runs. Running transfers follow as a \
            window opens or closes; `ferry session show` says what holds now. \
            --clear schedule removes it.

            Hooks: --on-complete and --on-fail run `/bin/sh -c COMMAND` when a transfer of the \
            session (or, for '*', of any session without its own) completes or fails, with \
            FERRY_ID, FERRY_URL, FERRY_PATH, FERRY_SHA256, FERRY_STATE, FERRY_ERROR and \
            FERRY_SESSION in its environment: quote them ("$FERRY_PATH"), and a file name can \
            never run as a command. A hook runs in its own process group; its output goes to \
            the daemon's log; one still running after 60 s is killed with all it started; it \
            never changes the transfer. --notify-url gets a JSON POST of each finished \
            transfer ({"event": "completed" or "failed", "transfer": {…}}), tried again after \
            1, 2, 4, 8 and 16 s until it answers 2xx; --desktop-notify shows a desktop notification (freedesktop \
            Notify, through gdbus) where a desktop session runs. Hooks and --notify-url are set \
            from the CLI (the API token), never from the web app, and not at all when the \
            daemon runs with `ferry serve --no-hooks`; --clear onComplete (onFail, notifyURL, \
            desktopNotify) removes one.
            """
    )

    @Argument(help: "The session ('*' for the daemon's own).")
    var name: String

    @OptionGroup var transfer: TransferOptionFlags

    @OptionGroup(title: "Logins (when a server answers 401; see `ferry credentials`)") var auth: AuthFlags

    @Option(name: .long, help: ArgumentHelp("Transfers of the session running at once.", valueName: "n"))
    var maxConcurrent: Int?

    @Option(name: .long, help: ArgumentHelp("The most connections to one host across all transfers (default 16).", valueName: "n"))
    var maxConnectionsPerHost: Int?

    @Option(name: .long, help: ArgumentHelp("Stop sending this header (repeatable).", valueName: "name"))
    var removeHeader: [String] = []

    @Option(name: .long, help: ArgumentHelp("A command run when a transfer completes (see above).", valueName: "command"))
    var onComplete: String?

    @Option(name: .long, help: ArgumentHelp("A command run when a transfer fails.", valueName: "command"))
    var onFail: String?

    @Option(name: .long, help: ArgumentHelp("An http(s) URL that gets a JSON POST of each finished transfer (see above).", valueName: "url"))
    var notifyURL: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Show a desktop notification (freedesktop, through gdbus) when a transfer ends.")
    var desktopNotify: Bool?

    @Option(name: .long, help: ArgumentHelp("A window of the week when --limit-rate holds: 'Mon-Fri 09:00-18:00' (repeatable).", valueName: "window"))
    var during: [String] = []

    @Option(name: .long, help: ArgumentHelp("With --during: outside the windows, 'unlimited' (the default) or 'paused'.", valueName: "what"))
    var outside: RateSchedule.Outside?

    @Flag(
        name: .long, inversion: .prefixedNo,
        help: "Run on a metered network; --no-metered: wait while the default route is metered: NetworkManager says so, or it goes out through one of --metered-interfaces (URLSession's allowsExpensiveNetworkAccess = false)."
    )
    var metered: Bool?

    @Flag(
        name: .long, inversion: .prefixedNo,
        help: "Run only inside the windows of the daemon's schedule (ferry session set '*' --during …), the hours marked cheap (URLSession's isDiscretionary)."
    )
    var discretionary: Bool?

    @Option(name: .long, help: ArgumentHelp("For '*': interfaces whose routes are metered, comma-separated (wwan0,usb0).", valueName: "names"))
    var meteredInterfaces: String?

    func validate() throws {
        guard outside == nil || !during.isEmpty else { throw ValidationError("--outside goes with --during.") }
        _ = try schedule()
        try auth.check(inputFromStdin: false)
    }

    /// The schedule --during and --limit-rate describe, if any.
    func schedule() throws -> RateSchedule? {
        guard !during.isEmpty else { return nil }
        let rate = try transfer.limitRate.map(TransferOptionFlags.parseRate)
        do {
            return RateSchedule(windows: try during.map { try RateSchedule.window(parsing: $0, bytesPerSecond: rate) }, outside: outside ?? .unlimited)
        } catch let error as FerryError {
            throw ValidationError(error.message)
        }
    }

    @Option(name: .long, help: ArgumentHelp("Clear a setting (repeatable): \(TransferOptionsUpdate.fieldNames.sorted().joined(separator: ", ")).", valueName: "field"))
    var clear: [String] = []

    @OptionGroup var output: OutputOptions

    func run() async throws {
        var given = try transfer.options()
        try auth.apply(to: &given)
        var set = given ?? TransferOptions()
        set.maxConcurrent = maxConcurrent
        set.maxConnectionsPerHost = maxConnectionsPerHost
        set.onComplete = onComplete
        set.onFail = onFail
        set.notifyURL = notifyURL
        set.desktopNotify = desktopNotify
        set.allowsMeteredNetwork = metered
        set.discretionary = discretionary
        set.meteredInterfaces = meteredInterfaces.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        if let schedule = try schedule() {
            set.schedule = schedule
            set.bytesPerSecond = nil  // The limit holds inside the windows only.
        }
        if !removeHeader.isEmpty {
            var headers = set.headers ?? [:]
            for name in removeHeader { headers[name] = "" }  // An empty value removes it.
            set.headers = headers
        }
        let update = TransferOptionsUpdate(set: set.isEmpty ? nil : set, clear: clear.isEmpty ? nil : clear)
        let client = try await CLIConnection.connect()
        let options = name == "*"
            ? try await client.updateDaemonConfiguration(update) : try await client.updateSessionConfiguration(name, update).options
        try SessionShowCommand.print(options, name: name, json: output.json)
    }
}
