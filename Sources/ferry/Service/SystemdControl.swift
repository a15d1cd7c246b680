import FerryKit
import FerryServer
import Foundation

/// `systemctl` for the user's manager (`--user`) or the system's, and what to tell the user when
/// systemd does not run (containers, WSL without systemd, other init systems).
struct SystemdControl {
    var scope: SystemdUnits.Scope

    var systemctl: String { scope == .user ? "systemctl --user" : "systemctl" }

    /// systemd is the init system (`sd_booted(3)`) and, for a user's units, the user's manager answers.
    var systemdRuns: Bool { whyNot.isEmpty }

    /// Why units cannot be started here; empty when they can.
    var whyNot: String {
        if let folder = ProcessInfo.processInfo.environment["FERRY_SYSTEMD_UNIT_DIR"], !folder.isEmpty {
            return "the units went to FERRY_SYSTEMD_UNIT_DIR"
        }
        guard FileManager.default.fileExists(atPath: "/run/systemd/system") else { return "no /run/systemd/system" }
        if scope == .user, (try? execute(["is-system-running"]))?.status == 1, output(["is-system-running"]) == nil {
            return "no user manager for this login; log in again or run `loginctl enable-linger`"
        }
        return ""
    }

    /// Runs `systemctl ARGS`, failing with its own message.
    func run(_ arguments: [String]) throws {
        let result = try execute(arguments)
        guard result.status == 0 else {
            let message = result.error.trimmingCharacters(in: .whitespacesAndNewlines)
            throw FerryError(.invalidRequest, "`\(systemctl) \(arguments.joined(separator: " "))` failed: \(message.isEmpty ? "status \(result.status)" : message)")
        }
    }

    /// What `systemctl ARGS` printed (e.g. `enabled`, `active`), or nil if it printed nothing.
    func output(_ arguments: [String]) -> String? {
        guard let text = (try? execute(arguments))?.output.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }

    /// For a user's service: how to keep it running without a login, when lingering is off.
    var lingerAdvice: String? {
        guard scope == .user, let user = ProcessInfo.processInfo.environment["USER"] else { return nil }
        let linger = try? Self.execute("/usr/bin/loginctl", ["show-user", user, "--property=Linger", "--value"])
        guard linger?.output.trimmingCharacters(in: .whitespacesAndNewlines) != "yes" else { return nil }
        return "It runs while you are logged in; `loginctl enable-linger \(user)` starts it at boot and keeps it running after you log out."
    }

    private func execute(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try Self.execute("/usr/bin/env", ["systemctl"] + (scope == .user ? ["--user"] : []) + arguments)
    }

    static func execute(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try ChildProcess.capture(program, arguments: arguments)
    }

    /// `preferring` when nothing listens there, else a port the kernel calls free.
    static func freePort(host: String, preferring port: Int) throws -> Int {
        let socket = try ListeningSocket.bind(host: host, port: port, fallbackToFreePort: true)
        defer { close(socket.descriptor) }
        return socket.port ?? port
    }

}
