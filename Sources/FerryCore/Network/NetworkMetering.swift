import Foundation

/// Whether the machine's network is metered now: its default route goes out through an
/// interface the user named as metered (the daemon's `meteredInterfaces`), or NetworkManager
/// says the primary connection is metered (`Metered`: yes or guessed yes), which the daemon
/// asks over D-Bus where NetworkManager runs.
/// Sessions with `allowsMeteredNetwork: false` wait meanwhile (``TransferControl/Limits``).
package enum NetworkMetering {
    /// The interfaces of the default routes in `/proc/net/route`'s text (IPv4).
    package static func defaultRouteInterfaces(_ table: String) -> [String] {
        table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            // Iface, Destination 00000000, ..., Mask (7th after Iface) 00000000: a default route.
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000" else { return nil }
            return String(fields[0])
        }
    }

    /// NetworkManager's `Metered` value (NMMetered: 1 yes, 3 guessed yes) means metered.
    package static func networkManagerSaysMetered(_ value: UInt32?) -> Bool {
        value == 1 || value == 3
    }

    /// Reads the route table; `networkManager` is NetworkManager's `Metered` (nil where it does
    /// not run).
    package static func isMetered(interfaces: [String], networkManager: UInt32?) -> Bool {
        if !interfaces.isEmpty, let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8),
            defaultRouteInterfaces(table).contains(where: interfaces.contains)
        {
            return true
        }
        return networkManagerSaysMetered(networkManager)
    }

    /// `busctl get-property`'s answer for a `u` property ("u 1") as its number.
    package static func parseBusctlUInt32(_ text: String) -> UInt32? {
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, parts[0] == "u" else { return nil }
        return UInt32(parts[1])
    }
}
