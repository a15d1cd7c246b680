import Foundation

/// Whether the machine's network is metered now: its default route goes out through an
/// interface the user named as metered (the daemon's `meteredInterfaces`), or NetworkManager
/// says the primary connection is metered (`Metered`: yes or guessed yes; not read yet: the
/// engine has no D-Bus client, so only the named interfaces count).
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

    /// Reads the route table; `networkManager` answers NetworkManager's `Metered` where it runs
    /// (the daemon asks it over D-Bus; nil: not running).
    package static func isMetered(interfaces: [String], networkManager: () -> UInt32? = { nil }) -> Bool {
        if !interfaces.isEmpty, let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8),
            defaultRouteInterfaces(table).contains(where: interfaces.contains)
        {
            return true
        }
        return networkManagerSaysMetered(networkManager())
    }
}
