import Foundation

/// How transfers are made: extra headers, timeouts, concurrency, bandwidth, when to start, how
/// often to retry. Set per session (like a `URLSessionConfiguration`) and overridable per
/// transfer; a field left nil falls back to the session's, then to the daemon's default.
public struct TransferOptions: Codable, Sendable, Hashable {
    /// Extra request headers, e.g. `Authorization` for a private feed. The daemon stores them
    /// to send them again after a restart, but never shows their values: reads return
    /// sensitive ones as `"<redacted>"`, and they never appear in events or logs.
    public var headers: [String: String]?
    /// Seconds to wait for a server to start answering (connection and response head).
    public var connectTimeoutSeconds: Double?
    /// Seconds without a byte before a transfer is considered stalled and retried.
    public var idleTimeoutSeconds: Double?
    /// Transfers of the session running at once (session-wide only).
    public var maxConcurrent: Int?
    /// Bandwidth limit in bytes per second (for the session's transfers together, or for one).
    public var bytesPerSecond: Int64?
    /// Not before this date: the transfer waits in the queue until then.
    public var startAfter: Date?
    /// Failed attempts in a row before giving up (0: never retry). Unset, a transfer waits out
    /// failures that waiting can mend until its resource timeout.
    public var maxRetries: Int?
    /// How long a transfer may go without progress, waiting for the network or a busy server,
    /// before it fails (like `URLSessionConfiguration.timeoutIntervalForResource`); 7 days unless set.
    public var resourceTimeoutSeconds: Double?
    /// A proxy for these transfers (``ProxyURL``: `http://user:password@host:port`,
    /// `socks5h://host:port`), over the daemon's environment (`http_proxy`, `https_proxy`,
    /// `all_proxy`, `no_proxy`). Its password is a secret: reads show it as `<redacted>`.
    public var proxy: String?
    /// True: connect directly, whatever the environment or an outer layer says.
    public var noProxy: Bool?
    /// Connections per download (like aria2c's `-x`): 1 fetches over one connection; more split
    /// the file into ranges fetched at once. Unset, a download adds connections while each one
    /// added raises its speed (a server that throttles each connection), up to the per-host cap.
    public var connections: Int?
    /// The most connections open to one host across all transfers (16 unless set; like
    /// `httpMaximumConnectionsPerHost`). Each transfer's first connection is always allowed.
    public var maxConnectionsPerHost: Int?
    /// The folder new downloads go to (an absolute path; a session's default, `ferry session set
    /// NAME --dir DIR`), instead of the library's Downloads/.
    public var directory: String?
    /// A command run when one of the session's transfers completes (per session or for the
    /// daemon; set with the API token only, never from the web app's login): `/bin/sh -c
    /// COMMAND`, with `FERRY_ID`, `FERRY_URL`, `FERRY_PATH`, `FERRY_SHA256`, `FERRY_STATE`,
    /// `FERRY_ERROR` and `FERRY_SESSION` in its environment. Killed after 60 s; it never changes
    /// the transfer.
    public var onComplete: String?
    /// A command run when one of the session's transfers fails (like ``onComplete``).
    public var onFail: String?
    /// An http(s) URL that gets a JSON POST of each finished transfer (retried a few times).
    public var notifyURL: String?
    /// A desktop notification of each finished transfer, where a desktop session runs.
    public var desktopNotify: Bool?
    /// A program (its absolute path, then its arguments) the daemon starts when one of the
    /// session's transfers completes or fails while no client listens to the session's events,
    /// with `FERRY_SESSION` set: as iOS relaunches an app for its background session
    /// (``BackgroundSession/Configuration/launchOnEvents``). Set with the API token only.
    public var launch: [String]?
    /// Bandwidth by the clock (per session or for the daemon): while it is set, its windows'
    /// limits take the place of ``bytesPerSecond``, and outside them there is no limit, or
    /// nothing runs (`outside: paused`).
    public var schedule: RateSchedule?
    /// False: the session's transfers wait while the network is metered (the default route goes
    /// out through an interface of the daemon's ``meteredInterfaces``, or NetworkManager calls
    /// the connection metered), as `URLSessionConfiguration.allowsExpensiveNetworkAccess`. Per
    /// session or for the daemon.
    public var allowsMeteredNetwork: Bool?
    /// True: the session's transfers run only inside the windows of the daemon's ``schedule``
    /// (the hours the user marks as cheap), as `URLSessionConfiguration.isDiscretionary`; with no
    /// daemon schedule, at any time. Per session.
    public var discretionary: Bool?
    /// The daemon's: network interfaces whose routes are metered (`wwan0`, `usb0`), beside what
    /// NetworkManager says where it runs.
    public var meteredInterfaces: [String]?
    /// PEM certificates of authorities to trust besides the system's (a company's or a home
    /// lab's CA), an absolute path: `--ca-certificate`.
    public var caCertificate: String?
    /// A folder of PEM certificates (`*.pem`, `*.crt`) to trust besides the system's: `--ca-directory`.
    public var caDirectory: String?
    /// A client certificate (PEM, an absolute path) for servers that ask who the client is
    /// (mutual TLS): `--certificate`. Its key is ``clientKey``.
    public var clientCertificate: String?
    /// The client certificate's private key (PEM, an absolute path): `--private-key`.
    public var clientKey: String?
    /// The passphrase of an encrypted ``clientKey``. A secret: reads show it as `<redacted>`.
    public var clientKeyPassphrase: String?
    /// True: the server's certificate is not checked (`--insecure`): for one transfer, or for a
    /// session's transfers made while it is set, never for the daemon. Such a transfer says so
    /// ("certificate not checked") wherever it is listed.
    public var insecure: Bool?
    /// The server's public key must be one of these (`sha256//BASE64`, several separated by `;`:
    /// ``PublicKeyPins``), whatever signed its certificate: `--pinned-public-key`. Checked on
    /// every https connection of a download, its redirects' too.
    public var pinnedPublicKey: String?
    /// A user name for the URL's own origin (scheme, host, port), sent when its server asks
    /// (401: Basic or Digest, the strongest it offers), never to another host: `--user`.
    public var user: String?
    /// ``user``'s password (`--password-stdin`). A secret: reads show it as `<redacted>`, backups
    /// keep it only sealed.
    public var password: String?
    /// A `.netrc` file (an absolute path, mode 0600) the daemon reads when a server asks who the
    /// user is: `--netrc`, `--netrc-file`. Its passwords are never journaled.
    public var netrcFile: String?
    /// True: passwords from a `.netrc` or the credential store may go over plain http, where
    /// anyone on the way can read them (`--auth-over-http`). A `--user` given for an http URL is
    /// sent regardless: the user named that URL.
    public var authOverHTTP: Bool?

    /// Options with the given fields set; a nil field falls back to the session's, then the
    /// daemon's default. Each parameter sets the property of the same name.
    public init(
        headers: [String: String]? = nil, connectTimeoutSeconds: Double? = nil, idleTimeoutSeconds: Double? = nil,
        maxConcurrent: Int? = nil, bytesPerSecond: Int64? = nil, startAfter: Date? = nil, maxRetries: Int? = nil,
        resourceTimeoutSeconds: Double? = nil, proxy: String? = nil, noProxy: Bool? = nil, connections: Int? = nil,
        maxConnectionsPerHost: Int? = nil, directory: String? = nil, onComplete: String? = nil, onFail: String? = nil,
        notifyURL: String? = nil, desktopNotify: Bool? = nil, launch: [String]? = nil, schedule: RateSchedule? = nil,
        allowsMeteredNetwork: Bool? = nil, discretionary: Bool? = nil, meteredInterfaces: [String]? = nil,
        caCertificate: String? = nil, caDirectory: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil,
        clientKeyPassphrase: String? = nil, insecure: Bool? = nil, pinnedPublicKey: String? = nil, user: String? = nil, password: String? = nil,
        netrcFile: String? = nil, authOverHTTP: Bool? = nil
    ) {
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.clientKeyPassphrase = clientKeyPassphrase
        self.insecure = insecure
        self.pinnedPublicKey = pinnedPublicKey
        self.user = user
        self.password = password
        self.netrcFile = netrcFile
        self.authOverHTTP = authOverHTTP
        self.caCertificate = caCertificate
        self.caDirectory = caDirectory
        self.allowsMeteredNetwork = allowsMeteredNetwork
        self.discretionary = discretionary
        self.meteredInterfaces = meteredInterfaces
        self.headers = headers
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxConcurrent = maxConcurrent
        self.bytesPerSecond = bytesPerSecond
        self.startAfter = startAfter
        self.maxRetries = maxRetries
        self.resourceTimeoutSeconds = resourceTimeoutSeconds
        self.proxy = proxy
        self.noProxy = noProxy
        self.connections = connections
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.directory = directory
        self.onComplete = onComplete
        self.onFail = onFail
        self.notifyURL = notifyURL
        self.desktopNotify = desktopNotify
        self.launch = launch
        self.schedule = schedule
    }

    /// The fields that run commands or send data elsewhere: only the API token sets them.
    public var setsHooks: Bool { onComplete != nil || onFail != nil || notifyURL != nil || launch != nil }

    /// Field names of ``setsHooks``, for `clear`.
    public static let hookFields: Set<String> = ["onComplete", "onFail", "notifyURL", "launch"]

    /// True when nothing is set.
    public var isEmpty: Bool { self == TransferOptions() }

    /// These options with `other`'s set fields on top (headers merged, `other` winning).
    public func overridden(by other: TransferOptions?) -> TransferOptions {
        guard let other else { return self }
        var merged = self
        if let headers = other.headers { merged.headers = (self.headers ?? [:]).merging(headers) { _, new in new } }
        merged.connectTimeoutSeconds = other.connectTimeoutSeconds ?? connectTimeoutSeconds
        merged.idleTimeoutSeconds = other.idleTimeoutSeconds ?? idleTimeoutSeconds
        merged.maxConcurrent = other.maxConcurrent ?? maxConcurrent
        merged.bytesPerSecond = other.bytesPerSecond ?? bytesPerSecond
        merged.startAfter = other.startAfter ?? startAfter
        merged.maxRetries = other.maxRetries ?? maxRetries
        merged.resourceTimeoutSeconds = other.resourceTimeoutSeconds ?? resourceTimeoutSeconds
        merged.connections = other.connections ?? connections
        merged.maxConnectionsPerHost = other.maxConnectionsPerHost ?? maxConnectionsPerHost
        merged.directory = other.directory ?? directory
        merged.onComplete = other.onComplete ?? onComplete
        merged.onFail = other.onFail ?? onFail
        merged.notifyURL = other.notifyURL ?? notifyURL
        merged.desktopNotify = other.desktopNotify ?? desktopNotify
        merged.launch = other.launch ?? launch
        merged.schedule = other.schedule ?? schedule
        merged.allowsMeteredNetwork = other.allowsMeteredNetwork ?? allowsMeteredNetwork
        merged.discretionary = other.discretionary ?? discretionary
        merged.meteredInterfaces = other.meteredInterfaces ?? meteredInterfaces
        merged.caCertificate = other.caCertificate ?? caCertificate
        merged.caDirectory = other.caDirectory ?? caDirectory
        // A certificate and its key come as a pair, from one layer.
        if other.clientCertificate != nil || other.clientKey != nil {
            merged.clientCertificate = other.clientCertificate
            merged.clientKey = other.clientKey
            merged.clientKeyPassphrase = other.clientKeyPassphrase
        }
        merged.insecure = other.insecure ?? insecure
        merged.pinnedPublicKey = other.pinnedPublicKey ?? pinnedPublicKey
        merged.netrcFile = other.netrcFile ?? netrcFile
        merged.authOverHTTP = other.authOverHTTP ?? authOverHTTP
        // A layer that names a user names its password too (or none).
        if other.user != nil {
            merged.user = other.user
            merged.password = other.password
        }
        // A layer that names a proxy, or says none, decides for itself and those below it.
        if other.proxy != nil || other.noProxy != nil {
            merged.proxy = other.proxy
            merged.noProxy = other.noProxy
        }
        return merged
    }

    /// Header names whose values are secrets.
    public static func isSensitive(header name: String) -> Bool {
        let lower = name.lowercased()
        return ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"]
            .contains(lower) || lower.contains("token") || lower.contains("secret") || lower.contains("password")
    }

    /// The options as they may be shown: sensitive header values replaced by `<redacted>`.
    public var redacted: TransferOptions {
        var copy = self
        copy.headers = headers.map { headers in
            Dictionary(uniqueKeysWithValues: headers.map { ($0.key, Self.isSensitive(header: $0.key) ? "<redacted>" : $0.value) })
        }
        copy.proxy = proxy.map { text in (try? ProxyURL(parsing: text).redacted) ?? ProxyURL.redact(text) }
        copy.clientKeyPassphrase = clientKeyPassphrase.map { _ in "<redacted>" }
        copy.password = password.map { _ in "<redacted>" }
        return copy
    }
}

/// `GET /v1/sessions/{session}/config` (sensitive header values redacted).
public struct SessionConfiguration: Codable, Sendable, Hashable {
    /// The session's identifier.
    public var session: String
    /// The session's options, sensitive header values redacted.
    public var options: TransferOptions

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(session: String, options: TransferOptions) {
        self.session = session
        self.options = options
    }
}

/// `PATCH /v1/sessions/{session}/config` and `PATCH /v1/config`: set some fields, clear others.
public struct TransferOptionsUpdate: Codable, Sendable, Hashable {
    /// Fields to set; headers are merged into the existing ones (an empty value removes one).
    public var set: TransferOptions?
    /// Field names to clear: `headers`, `connectTimeoutSeconds`, `idleTimeoutSeconds`,
    /// `maxConcurrent`, `bytesPerSecond`, `startAfter`, `maxRetries`, `resourceTimeoutSeconds`,
    /// `proxy` and `noProxy` (either clears both: the environment decides again), `connections`,
    /// `maxConnectionsPerHost`, `directory`, `onComplete`, `onFail`, `notifyURL`, `desktopNotify`.
    public var clear: [String]?

    /// An update: it clears the fields named in `clear`, then sets those of `set`.
    public init(set: TransferOptions? = nil, clear: [String]? = nil) {
        self.set = set
        self.clear = clear
    }

    /// The field names that `clear` accepts.
    public static let fieldNames: Set<String> = [
        "headers", "connectTimeoutSeconds", "idleTimeoutSeconds", "maxConcurrent", "bytesPerSecond", "startAfter", "maxRetries",
        "resourceTimeoutSeconds", "proxy", "noProxy", "connections", "maxConnectionsPerHost", "directory", "onComplete", "onFail",
        "notifyURL", "desktopNotify", "launch", "schedule", "allowsMeteredNetwork", "discretionary", "meteredInterfaces",
        "caCertificate", "caDirectory", "clientCertificate", "insecure", "pinnedPublicKey", "user", "password", "netrcFile", "authOverHTTP",
    ]

    /// `options` with this update applied.
    /// - Throws: `invalid_request` for an unknown field name or an out-of-range value.
    public func applied(to options: TransferOptions) throws -> TransferOptions {
        var result = options
        for field in clear ?? [] {
            switch field {
            case "headers": result.headers = nil
            case "connectTimeoutSeconds": result.connectTimeoutSeconds = nil
            case "idleTimeoutSeconds": result.idleTimeoutSeconds = nil
            case "maxConcurrent": result.maxConcurrent = nil
            case "bytesPerSecond": result.bytesPerSecond = nil
            case "startAfter": result.startAfter = nil
            case "maxRetries": result.maxRetries = nil
            case "resourceTimeoutSeconds": result.resourceTimeoutSeconds = nil
            case "connections": result.connections = nil
            case "maxConnectionsPerHost": result.maxConnectionsPerHost = nil
            case "directory": result.directory = nil
            case "onComplete": result.onComplete = nil
            case "onFail": result.onFail = nil
            case "notifyURL": result.notifyURL = nil
            case "desktopNotify": result.desktopNotify = nil
            case "launch": result.launch = nil
            case "schedule": result.schedule = nil
            case "allowsMeteredNetwork": result.allowsMeteredNetwork = nil
            case "discretionary": result.discretionary = nil
            case "meteredInterfaces": result.meteredInterfaces = nil
            case "caCertificate": result.caCertificate = nil
            case "caDirectory": result.caDirectory = nil
            case "clientCertificate", "clientKey", "clientKeyPassphrase":
                result.clientCertificate = nil
                result.clientKey = nil
                result.clientKeyPassphrase = nil
            case "insecure": result.insecure = nil
            case "pinnedPublicKey": result.pinnedPublicKey = nil
            case "user", "password":
                result.user = nil
                result.password = nil
            case "netrcFile": result.netrcFile = nil
            case "authOverHTTP": result.authOverHTTP = nil
            case "proxy", "noProxy":
                result.proxy = nil
                result.noProxy = nil
            default:
                throw FerryError.invalidRequest("'\(field.prefix(40))' is not a setting; use \(Self.fieldNames.sorted().joined(separator: ", ")).")
            }
        }
        if let set {
            try set.validate()
            result = result.overridden(by: set)
            result.headers = result.headers?.filter { !$0.value.isEmpty }
            if result.headers?.isEmpty == true { result.headers = nil }
        }
        return result
    }
}

extension TransferOptions {
    /// Checks ranges and header syntax.
    /// - Throws: ``FerryError`` `invalid_request` naming the first value out of range, or a
    ///   header that is malformed or that Ferry sets itself.
    public func validate() throws {
        if let value = connectTimeoutSeconds, !(0.1...3600).contains(value) {
            throw FerryError.invalidRequest("connectTimeoutSeconds must be between 0.1 and 3600.")
        }
        if let value = idleTimeoutSeconds, !(0.1...86_400).contains(value) {
            throw FerryError.invalidRequest("idleTimeoutSeconds must be between 0.1 and 86400.")
        }
        if let value = maxConcurrent, !(1...256).contains(value) {
            throw FerryError.invalidRequest("maxConcurrent must be between 1 and 256.")
        }
        if let value = bytesPerSecond, value < 1024 {
            throw FerryError.invalidRequest("bytesPerSecond must be at least 1024 (1 KiB/s).")
        }
        if let value = connections, !(1...64).contains(value) {
            throw FerryError.invalidRequest("connections must be between 1 and 64.")
        }
        if let value = maxConnectionsPerHost, !(1...64).contains(value) {
            throw FerryError.invalidRequest("maxConnectionsPerHost must be between 1 and 64.")
        }
        if let value = maxRetries, !(0...1000).contains(value) {
            throw FerryError.invalidRequest("maxRetries must be between 0 and 1000.")
        }
        if let names = meteredInterfaces {
            guard names.count <= 64, names.allSatisfy({ !$0.isEmpty && $0.count <= 15 && !$0.contains("/") && $0.allSatisfy { !$0.isWhitespace } }) else {
                throw FerryError.invalidRequest("meteredInterfaces are interface names such as wwan0 (up to 15 characters, no spaces or '/').")
            }
        }
        if let proxy {
            _ = try ProxyURL(parsing: proxy)
            if noProxy == true { throw FerryError.invalidRequest("Give a proxy or say to use none (noProxy), not both.") }
        }
        if (clientCertificate == nil) != (clientKey == nil) {
            throw FerryError.invalidRequest("A client certificate goes with its private key: give both (--certificate FILE --private-key FILE).")
        }
        if let pinnedPublicKey { _ = try PublicKeyPins(parsing: pinnedPublicKey) }
        if clientKeyPassphrase != nil, clientKey == nil {
            throw FerryError.invalidRequest("A key passphrase goes with a private key (--private-key FILE).")
        }
        if let passphrase = clientKeyPassphrase, passphrase.isEmpty || passphrase.utf8.count > 1024 || passphrase.utf8.contains(0) {
            throw FerryError.invalidRequest("A key passphrase has 1 to 1,024 bytes, without NUL.")
        }
        if let user {
            guard !user.isEmpty, user.utf8.count <= 256, !user.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw FerryError.invalidRequest("user must be a name of 1 to 256 bytes without line breaks.")
            }
        }
        if let password {
            guard user != nil else { throw FerryError.invalidRequest("A password needs a user name (user) to go with it.") }
            guard password.utf8.count <= 4096, !password.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw FerryError.invalidRequest("The password must be at most 4096 bytes, without line breaks.")
            }
        }
        for (name, path) in [
            ("caCertificate", caCertificate), ("caDirectory", caDirectory), ("clientCertificate", clientCertificate), ("clientKey", clientKey),
            ("netrcFile", netrcFile),
        ] {
            if let path, !path.hasPrefix("/") || path.utf8.contains(0) || path.utf8.count > 4096 {
                throw FerryError.invalidRequest("\(name) must be an absolute path ('\(path.prefix(80))' is not).")
            }
        }
        if let directory, !directory.hasPrefix("/") || directory.utf8.contains(0) {
            throw FerryError.invalidRequest("directory must be an absolute path ('\(directory.prefix(80))' is not).")
        }
        for (name, command) in [("onComplete", onComplete), ("onFail", onFail)] {
            guard let command else { continue }
            guard !command.trimmingCharacters(in: .whitespaces).isEmpty, !command.utf8.contains(0), command.utf8.count <= 4096 else {
                throw FerryError.invalidRequest("\(name) must be a command of 1 to 4096 bytes without NUL.")
            }
        }
        try schedule?.validate()
        if let launch {
            guard let program = launch.first, program.hasPrefix("/"), launch.count <= 64, !launch.contains(where: { $0.utf8.contains(0) }) else {
                throw FerryError.invalidRequest("launch must be a program's absolute path, then at most 63 arguments, without NUL.")
            }
        }
        if let notifyURL {
            guard let url = URL(string: notifyURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw FerryError.invalidRequest("notifyURL must be an http or https URL ('\(notifyURL.prefix(80))' is not).")
            }
        }
        if let value = resourceTimeoutSeconds, !(value >= 1 && value <= 366 * 86_400) {
            throw FerryError.invalidRequest("resourceTimeoutSeconds must be between 1 second and 366 days (it was \(value)).")
        }
        for (name, value) in headers ?? [:] {
            let token = name.utf8.allSatisfy { byte in
                (0x21...0x7E).contains(byte) && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
            }
            guard !name.isEmpty, token else { throw FerryError.invalidRequest("'\(name.prefix(40))' is not a valid header name.") }
            guard !value.contains("\r"), !value.contains("\n"), !value.contains("\0") else {
                throw FerryError.invalidRequest("The value of header \(name) contains a line break.")
            }
            let reserved = ["host", "content-length", "transfer-encoding", "range", "if-range", "connection", "upload-offset", "upload-complete", "tus-resumable"]
            guard !reserved.contains(name.lowercased()) else {
                throw FerryError.invalidRequest("The header \(name) is set by Ferry itself and cannot be configured.")
            }
        }
    }
}
