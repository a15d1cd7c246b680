import FerryCore
import FerryKit
import Foundation
import Logging

/// A desktop notification of a finished transfer, through the freedesktop notification service
/// on the session bus (`gdbus`, from GLib). Where no desktop session runs (no
/// `DBUS_SESSION_BUS_ADDRESS`, no `gdbus`), it says so in the log and does nothing.
struct DesktopNotification: Sendable {
    var summary: String
    var body: String

    init(_ transfer: Transfer) {
        let name = transfer.path.map { URL(fileURLWithPath: $0).lastPathComponent } ?? URL(string: transfer.url)?.lastPathComponent ?? transfer.url
        summary = transfer.state == .completed ? "Downloaded \(name)" : "Download failed: \(name)"
        body = transfer.state == .completed ? (transfer.path ?? "") : (transfer.error?.message ?? "")
    }

    static let gdbus = ["/usr/bin/gdbus", "/bin/gdbus"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The `gdbus` arguments of the Notify call: app name, replaces id, icon, summary, body,
    /// actions, hints, timeout. Each is one argument: no shell sees them. The types are spelled
    /// out: gdbus guesses them (`[]` as a string) when the service cannot be introspected.
    var arguments: [String] {
        [
            "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
            "--method", "org.freedesktop.Notifications.Notify", "Ferry", "uint32 0", "folder-download", Self.gvariant(summary),
            Self.gvariant(body), "@as []", "@a{sv} {}", "int32 5000",
        ]
    }

    /// - Parameter bus: the session bus's address (`DBUS_SESSION_BUS_ADDRESS`); nil: no desktop.
    func show(bus: String?, logger: Logger) async {
        guard let bus, let gdbus = Self.gdbus else {
            logger.info("no desktop session for a notification (DBUS_SESSION_BUS_ADDRESS and gdbus are needed)")
            return
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        do {
            let (status, error) = try await ChildProcess.run(gdbus, arguments: arguments, environment: environment)
            if status != 0 { logger.info("desktop notification refused", metadata: ["error": "\(error)"]) }
        } catch {
            logger.info("desktop notification not sent", metadata: ["error": "\(error)"])
        }
    }

    /// A GVariant string literal: single quotes, with backslashes and quotes escaped.
    static func gvariant(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
