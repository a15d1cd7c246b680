import Foundation

/// The systemd units that keep Ferry running: a service that starts with the user's session (or
/// at boot, for the system), restarts after a crash and stops gracefully with SIGTERM, and a
/// socket on the daemon's address, so the first request starts the daemon when it is not running
/// (socket activation; the daemon takes the socket over and reports readiness, `Type=notify`).
/// Pure text, so tests check it and `systemd-analyze verify` judges it.
struct SystemdUnits: Equatable {
    /// A user's units (`~/.config/systemd/user`), or the system's for one user.
    enum Scope: Equatable {
        case user
        case system(user: String)
    }

    var scope: Scope
    /// The absolute path of the `ferry` executable.
    var executable: String
    var host: String
    var port: Int
    /// Variables the daemon needs from the installing shell: `FERRY_HOME`, proxies.
    var environment: [String: String]

    /// The variables carried from the installing shell into the unit.
    static let carriedVariables = [
        "FERRY_HOME", "FERRY_CATALOG_URL", "XDG_DATA_HOME", "XDG_STATE_HOME",
        "http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
        "SSL_CERT_FILE", "SSL_CERT_DIR",
    ]

    /// `ferry` for the user's units, `ferry-NAME` for a system service of user NAME.
    var name: String {
        switch scope {
        case .user: "ferry"
        case .system(let user): "ferry-\(user)"
        }
    }

    var serviceFileName: String { "\(name).service" }
    var socketFileName: String { "\(name).socket" }

    var listenAddress: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var service: String {
        var unit = """
            [Unit]
            Description=Ferry background transfers\(scopeDescription)
            Documentation=man:ferry(1)
            Requires=\(socketFileName)
            After=\(socketFileName)

            """
        if case .system = scope {
            unit += "Wants=network-online.target\nAfter=network-online.target\n"
        }
        unit += """

            [Service]
            Type=notify
            ExecStart=\(Self.quoted(executable, command: true)) serve
            Restart=on-failure
            RestartSec=2
            KillSignal=SIGTERM
            TimeoutStopSec=60
            NoNewPrivileges=yes

            """
        if case .system(let user) = scope {
            unit += "User=\(user)\n"
        }
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) {
            unit += "Environment=\(Self.quoted("\(key)=\(value)"))\n"
        }
        unit += """

            [Install]
            WantedBy=\(scope == .user ? "default.target" : "multi-user.target")

            """
        return unit
    }

    var socket: String {
        """
        [Unit]
        Description=Ferry API socket\(scopeDescription)
        Documentation=man:ferry(1)

        [Socket]
        ListenStream=\(listenAddress)
        NoDelay=yes

        [Install]
        WantedBy=sockets.target

        """
    }

    private var scopeDescription: String {
        switch scope {
        case .user: ""
        case .system(let user): " of \(user)"
        }
    }

    /// A value in double quotes with systemd's escapes, `%` doubled (a specifier otherwise), and
    /// in a command line `$` doubled too (a variable otherwise).
    static func quoted(_ value: String, command: Bool = false) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "%": escaped += "%%"
            case "$" where command: escaped += "$$"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }

    /// Where the units go: `$XDG_CONFIG_HOME/systemd/user` for the user's, else
    /// `/etc/systemd/system`. `FERRY_SYSTEMD_UNIT_DIR` overrides both (tests).
    static func folder(for scope: Scope, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let folder = environment["FERRY_SYSTEMD_UNIT_DIR"], !folder.isEmpty { return URL(fileURLWithPath: folder) }
        switch scope {
        case .user:
            let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
            return URL(fileURLWithPath: config).appendingPathComponent("systemd/user")
        case .system:
            return URL(fileURLWithPath: "/etc/systemd/system")
        }
    }
}
