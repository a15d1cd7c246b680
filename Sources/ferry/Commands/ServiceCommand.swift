import ArgumentParser
import FerryKit
import FerryServer
import Foundation

struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Have systemd run the daemon: at login (or boot), after a crash, and on the first request.",
        discussion: """
            `ferry service install` writes two systemd units, ferry.service and ferry.socket, into \
            ~/.config/systemd/user (with --system: /etc/systemd/system, for the user named by \
            --user), then enables and starts them with systemctl. Downloads then resume after a \
            reboot or a new login without any command, and the first request of the CLI, the web \
            app or a FerryKit program starts the daemon if it is not running.

            A user's service runs while the user is logged in; `loginctl enable-linger USER` makes \
            it start at boot and keep running after logout. Where systemd does not run, the units \
            are written and the command says so.

            Proxy variables (http_proxy, https_proxy, all_proxy, no_proxy) and FERRY_HOME set \
            when installing are written into the service, so the daemon uses them too.
            """,
        subcommands: [ServiceInstallCommand.self, ServiceUninstallCommand.self, ServiceStatusCommand.self]
    )
}

/// `--system` and `--user NAME`, shared by the service commands.
struct ServiceScopeOptions: ParsableArguments {
    @Flag(name: .long, help: "The system's units (/etc/systemd/system; needs root) instead of your own.")
    var system = false

    @Option(name: .long, help: ArgumentHelp("With --system: the user the daemon runs as (default: the one running sudo).", valueName: "name"))
    var user: String?

    func validate() throws {
        if user != nil, !system { throw ValidationError("--user goes with --system (your own service always runs as you).") }
        if let user, user.isEmpty || !user.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) {
            throw ValidationError("'\(user.prefix(40))' is not a user name.")
        }
    }

    var scope: SystemdUnits.Scope {
        get throws {
            guard system else { return .user }
            let environment = ProcessInfo.processInfo.environment
            guard let name = user ?? environment["SUDO_USER"] ?? environment["USER"] else {
                throw ValidationError("Name the user the daemon runs as with --user.")
            }
            guard getpwnam(name) != nil else { throw FerryError.invalidRequest("There is no user '\(name)' on this machine.") }
            return .system(user: name)
        }
    }
}

struct ServiceInstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Write, enable and start the systemd units (ferry.service and ferry.socket)."
    )

    @OptionGroup var scopeOptions: ServiceScopeOptions

    @Option(name: .long, help: ArgumentHelp("The port of the daemon's socket (default: 7447, or a free one when 7447 is taken).", valueName: "port"))
    var port: Int?

    @Flag(name: .long, help: "Write and enable the units, but do not start them now.")
    var noStart = false

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port must be between 1 and 65535.") }
    }

    func run() async throws {
        let scope = try scopeOptions.scope
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let host = ProcessInfo.processInfo.environment["FERRY_HOST"] ?? "127.0.0.1"
        var environment = ProcessInfo.processInfo.environment.filter { SystemdUnits.carriedVariables.contains($0.key) && !$0.value.isEmpty }
        if case .system = scope { environment["FERRY_HOME"] = nil }

        // A daemon this user started by hand gives way to the service (its transfers resume there).
        if scope == .user, let running = await DaemonConnector(paths: .resolve()).running() {
            _ = try await StopCommand.stop(running)
            Terminal.print("Stopped the daemon that was running at \(running.baseURL); the service takes over.")
        }
        let chosenPort = try port ?? SystemdControl.freePort(host: host, preferring: DaemonConfiguration.defaultPort)
        let units = SystemdUnits(scope: scope, executable: executable, host: host, port: chosenPort, environment: environment)
        let folder = SystemdUnits.folder(for: scope)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // 0600: the service may carry proxy credentials.
            for (name, text) in [(units.serviceFileName, units.service), (units.socketFileName, units.socket)] {
                let url = folder.appendingPathComponent(name)
                try Data(text.utf8).write(to: url, options: .atomic)
                _ = chmod(url.path, 0o600)
            }
        } catch {
            throw FerryError(.invalidRequest, "Cannot write the units into \(folder.path): \(error.localizedDescription)")
        }
        Terminal.print("Wrote \(folder.appendingPathComponent(units.serviceFileName).path) and \(units.socketFileName) (the daemon's address: http://\(units.listenAddress)).")

        let control = SystemdControl(scope: scope)
        guard control.systemdRuns else {
            Terminal.print("systemd does not run here (\(control.whyNot)), so nothing was enabled; start the daemon with `ferry serve --detach`, or on a machine with systemd run `\(control.systemctl) enable --now \(units.socketFileName) \(units.serviceFileName)`.")
            return
        }
        try control.run(["daemon-reload"])
        try control.run(["enable"] + (noStart ? [] : ["--now"]) + [units.socketFileName, units.serviceFileName])
        if scope == .user {
            // Clients connect there first: the socket starts the daemon.
            try ServiceAddress.write(url: "http://\(units.listenAddress)", paths: .resolve())
        }
        Terminal.print(noStart ? "Enabled \(units.name); it starts with the next login or boot." : "Enabled and started \(units.name).")
        if let advice = control.lingerAdvice { Terminal.print(advice) }
    }
}

struct ServiceUninstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Stop and disable the systemd units and delete them (your files and transfers stay)."
    )

    @OptionGroup var scopeOptions: ServiceScopeOptions

    func run() async throws {
        let scope = try scopeOptions.scope
        let units = SystemdUnits(scope: scope, executable: "", host: "", port: 0, environment: [:])
        let folder = SystemdUnits.folder(for: scope)
        let control = SystemdControl(scope: scope)
        if control.systemdRuns {
            try? control.run(["disable", "--now", units.socketFileName, units.serviceFileName])
        }
        var removed: [String] = []
        for name in [units.serviceFileName, units.socketFileName] {
            let url = folder.appendingPathComponent(name)
            if (try? FileManager.default.removeItem(at: url)) != nil { removed.append(url.path) }
        }
        if scope == .user { ServiceAddress.remove(paths: .resolve()) }
        if control.systemdRuns { try? control.run(["daemon-reload"]) }
        Terminal.print(removed.isEmpty ? "No Ferry units were installed in \(folder.path)." : "Removed \(removed.joined(separator: " and ")).")
    }
}

struct ServiceStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the units are installed, enabled and running, and where the daemon listens (exit 1 if not installed)."
    )

    @OptionGroup var scopeOptions: ServiceScopeOptions

    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false

    struct Report: Codable {
        var installed: Bool
        var unitFolder: String
        var systemd: Bool
        var enabled: String?
        var active: String?
        var url: String?
    }

    func run() async throws {
        let scope = try scopeOptions.scope
        let units = SystemdUnits(scope: scope, executable: "", host: "", port: 0, environment: [:])
        let folder = SystemdUnits.folder(for: scope)
        let control = SystemdControl(scope: scope)
        let serviceFile = folder.appendingPathComponent(units.serviceFileName)
        var report = Report(
            installed: FileManager.default.fileExists(atPath: serviceFile.path), unitFolder: folder.path, systemd: control.systemdRuns
        )
        if control.systemdRuns, report.installed {
            report.enabled = control.output(["is-enabled", units.serviceFileName])
            report.active = control.output(["is-active", units.serviceFileName])
        }
        if scope == .user {
            report.url = await DaemonConnector(paths: .resolve()).running()?.baseURL ?? ServiceAddress.read(paths: .resolve())
        }
        if json {
            try FerryJSON.encoder(pretty: true).printing(report)
        } else if !report.installed {
            Terminal.print("No Ferry service is installed (\(serviceFile.path)); `ferry service install` sets one up.")
        } else {
            var line = "Installed: \(serviceFile.path)"
            if let enabled = report.enabled, let active = report.active { line += " (\(enabled), \(active))" }
            if !control.systemdRuns { line += " (systemd does not run here: \(control.whyNot))" }
            Terminal.print(line)
            if let url = report.url { Terminal.print("Daemon address: \(url)") }
        }
        if !report.installed { throw ExitCode(1) }
    }
}
