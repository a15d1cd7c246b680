import ArgumentParser
import FerryKit
import Foundation

/// The per-transfer options shared by `get`, `put` and `session set`.
struct TransferOptionFlags: ParsableArguments {
    @Option(name: .customLong("header"), help: ArgumentHelp("An extra request header, 'Name: value' (repeatable). Credentials are kept by the daemon, never shown.", valueName: "header"))
    var headers: [String] = []

    @Option(name: .long, help: ArgumentHelp("A bandwidth limit in bytes per second; k, M and G suffixes count in 1024s (e.g. 500k).", valueName: "rate"))
    var limitRate: String?

    @Option(name: .long, help: ArgumentHelp("Not before this time: an ISO 8601 date (2026-12-24T06:00:00Z) or +N s/m/h/d from now (+30m).", valueName: "time"))
    var at: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a server may take to answer.", valueName: "seconds"))
    var connectTimeout: Double?

    @Option(name: .long, help: ArgumentHelp("Seconds without a byte before an attempt counts as stalled and is retried.", valueName: "seconds"))
    var idleTimeout: Double?

    @Option(name: .long, help: ArgumentHelp("Failed attempts in a row to retry before giving up (0: never retry). Unset, failures that waiting can mend are waited out until the resource timeout.", valueName: "n"))
    var maxRetries: Int?

    @Option(name: .long, help: ArgumentHelp("How long a transfer may go without progress (no network, a busy server) before it fails: 90s, 30m, 12h, 7d (the default).", valueName: "duration"))
    var resourceTimeout: String?

    @Option(name: .long, help: ArgumentHelp("Go through this proxy: http://[user:password@]host:port, or socks5h://host:port (over http_proxy, https_proxy, all_proxy).", valueName: "url"))
    var proxy: String?

    @Flag(name: .long, help: "Connect directly, whatever proxy the daemon's environment or the session names.")
    var noProxy = false

    @Option(name: [.customShort("x"), .long], help: ArgumentHelp("Connections per download (like aria2c's -x): 1 for one connection; more fetch ranges of the file at once. Unset, Ferry adds connections while they make it faster (a server that throttles each connection).", valueName: "n"))
    var connections: Int?

    @Option(name: .long, help: ArgumentHelp("Trust the certificate authorities in this PEM file besides the system's (a company's or a home lab's CA).", valueName: "file"))
    var caCertificate: String?

    @Option(name: .long, help: ArgumentHelp("Trust every PEM certificate (*.pem, *.crt) in this folder besides the system's.", valueName: "dir"))
    var caDirectory: String?

    @Option(name: .long, help: ArgumentHelp("Present this client certificate (PEM) to servers that ask who you are (mutual TLS); with --private-key.", valueName: "file"))
    var certificate: String?

    @Option(name: .long, help: ArgumentHelp("The client certificate's private key (PEM). An encrypted one needs its passphrase: --private-key-passphrase-file or --private-key-passphrase-stdin (kept by the daemon, never shown).", valueName: "file"))
    var privateKey: String?

    @Option(name: .long, help: ArgumentHelp("Read the private key's passphrase from this file (its first line).", valueName: "file"))
    var privateKeyPassphraseFile: String?

    @Flag(name: .long, help: "Read the private key's passphrase from standard input (its first line).")
    var privateKeyPassphraseStdin = false

    @Flag(name: [.customShort("k"), .long], help: "Do not check the server's certificate (a test server, a device with a self-made certificate). Per transfer or session only; such transfers are listed as \"certificate not checked\". Prefer --ca-certificate.")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("Refuse the server unless its public key is this one, even with a valid certificate: sha256// and the base64 SHA-256 of its key, several separated by ';' (as curl takes it). `openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints it.", valueName: "sha256//hash"))
    var pinnedPublicKey: String?

    @Option(name: [.customShort("A"), .long], help: ArgumentHelp("The User-Agent header to send (Ferry's own unless set).", valueName: "text"))
    var userAgent: String?

    @Option(name: .long, help: ArgumentHelp("The Referer header to send (some servers want the page a link was on).", valueName: "url"))
    var referer: String?

    @Option(name: .long, help: ArgumentHelp("The folder files go to (relative to here; it must exist, or `get --mkdir` creates it): for `get`, these downloads; for `session set`, the session's downloads from now on.", valueName: "dir"))
    var dir: String?

    /// The options given, or nil when none was.
    func options(now: Date = Date()) throws -> TransferOptions? {
        var options = TransferOptions()
        var headers = try Self.parseHeaders(self.headers)
        if let userAgent { headers["User-Agent"] = try Self.headerValue(userAgent, flag: "--user-agent") }
        if let referer { headers["Referer"] = try Self.headerValue(referer, flag: "--referer") }
        if !headers.isEmpty { options.headers = headers }
        options.bytesPerSecond = try limitRate.map(Self.parseRate)
        options.startAfter = try at.map { try Self.parseTime($0, now: now) }
        options.connectTimeoutSeconds = connectTimeout
        options.idleTimeoutSeconds = idleTimeout
        options.maxRetries = maxRetries
        options.resourceTimeoutSeconds = try resourceTimeout.map(Self.parseDuration)
        if proxy != nil, noProxy { throw ValidationError("Give --proxy or --no-proxy, not both.") }
        if let proxy {
            do {
                _ = try ProxyURL(parsing: proxy)
            } catch {
                throw ValidationError(error.message)
            }
            options.proxy = proxy
        }
        options.noProxy = noProxy ? true : nil
        if let connections {
            guard (1...64).contains(connections) else { throw ValidationError("--connections takes 1 to 64 (it was \(connections)).") }
            options.connections = connections
        }
        options.directory = dir.map(Self.absolutePath)
        options.caCertificate = caCertificate.map(Self.absolutePath)
        options.caDirectory = caDirectory.map(Self.absolutePath)
        if (certificate == nil) != (privateKey == nil) { throw ValidationError("--certificate and --private-key go together.") }
        options.clientCertificate = certificate.map(Self.absolutePath)
        options.clientKey = privateKey.map(Self.absolutePath)
        if privateKeyPassphraseFile != nil || privateKeyPassphraseStdin {
            guard privateKey != nil else { throw ValidationError("A passphrase goes with --private-key FILE.") }
            guard privateKeyPassphraseFile == nil || !privateKeyPassphraseStdin else {
                throw ValidationError("--private-key-passphrase-file and --private-key-passphrase-stdin do not go together.")
            }
            options.clientKeyPassphrase = try privateKeyPassphraseFile.map { try PasswordInput.readFile($0) } ?? PasswordInput.readStdin()
        }
        options.insecure = insecure ? true : nil
        if let pinnedPublicKey {
            do {
                options.pinnedPublicKey = try PublicKeyPins(parsing: pinnedPublicKey).text
            } catch {
                throw ValidationError(error.message)
            }
        }
        return options.isEmpty ? nil : options
    }

    /// A path as the caller means it: relative ones from the working directory (the daemon has
    /// another), `~/` from the home folder.
    static func absolutePath(_ path: String) -> String {
        let expanded = path == "~" || path.hasPrefix("~/") ? NSString(string: path).expandingTildeInPath : path
        return URL(fileURLWithPath: expanded, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
            .standardizedFileURL.path
    }

    static func headerValue(_ value: String, flag: String) throws -> String {
        guard !value.isEmpty, !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw ValidationError("\(flag) takes one line of text.")
        }
        return value
    }

    static func parseHeaders(_ lines: [String]) throws -> [String: String] {
        var result: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw ValidationError("'\(line.prefix(60))' is not a header; write it as 'Name: value'.")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            result[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    /// `500000`, `500k`, `1.5M`, `1G` → bytes per second.
    static func parseRate(_ text: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [Character: Double] = ["k": 1024, "K": 1024, "m": 1_048_576, "M": 1_048_576, "g": 1_073_741_824, "G": 1_073_741_824]
        var number = Substring(trimmed)
        var factor = 1.0
        if let last = number.last, let unit = units[last] {
            factor = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw ValidationError("'\(text)' is not a rate; write bytes per second like 250000, 500k or 2M.")
        }
        return Int64(value * factor)
    }

    /// `90`, `90s`, `30m`, `12h`, `7d` → seconds; zero and negative durations are refused.
    static func parseDuration(_ text: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let unit = trimmed.last.flatMap { units[$0] }
        guard let value = Double(unit == nil ? Substring(trimmed) : trimmed.dropLast()), value.isFinite else {
            throw ValidationError("'\(text)' is not a duration; write it like 90s, 30m, 12h or 7d.")
        }
        guard value > 0 else { throw ValidationError("The resource timeout must be longer than zero ('\(text)').") }
        return value * (unit ?? 1)
    }

    /// An ISO 8601 date, or `+N` seconds/minutes/hours/days from `now` (`+90s`, `+30m`, `+2h`, `+1d`).
    static func parseTime(_ text: String, now: Date) throws -> Date {
        if text.hasPrefix("+") {
            let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
            if let unit = text.last.flatMap({ units[$0] }), let value = Double(text.dropFirst().dropLast()), value >= 0 {
                return now.addingTimeInterval(value * unit)
            }
        } else if let date = ISO8601DateFormatter().date(from: text) {
            return date
        }
        throw ValidationError("'\(text)' is not a time; give an ISO 8601 date like 2026-12-24T06:00:00Z, or +30m.")
    }
}
