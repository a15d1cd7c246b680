/// The rtnetlink messages the ``NetworkWatcher`` reads (`rtnetlink(7)`), parsed without I/O: which
/// of them may mean that the network is back (a link up and running, an address or a route added).
/// Removals never do; they only make attempts fail sooner.
package enum RouteMessage: Equatable, Sendable {
    /// `RTM_NEWLINK`: a link's state; `running` when it is up with a carrier.
    case link(index: Int32, running: Bool)
    case linkRemoved
    /// `RTM_NEWADDR`.
    case addressAdded
    case addressRemoved
    /// `RTM_NEWROUTE`; `isDefault` for a route to everywhere (prefix length 0).
    case routeAdded(isDefault: Bool)
    case routeRemoved
    case other(type: UInt16)

    /// True for news that may bring the network back.
    package var mayReconnect: Bool {
        switch self {
        case .link(_, let running): running
        case .addressAdded, .routeAdded: true
        case .linkRemoved, .addressRemoved, .routeRemoved, .other: false
        }
    }

    // linux/rtnetlink.h, linux/if.h
    static let newLink: UInt16 = 16, delLink: UInt16 = 17, newAddress: UInt16 = 20, delAddress: UInt16 = 21
    static let newRoute: UInt16 = 24, delRoute: UInt16 = 25
    static let flagUp: UInt32 = 0x1, flagRunning: UInt32 = 0x40, flagLowerUp: UInt32 = 0x1_0000
    /// Group bits to bind to: links, IPv4 and IPv6 addresses and routes.
    package static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    /// Every message in one datagram (netlink packs several, each 4-byte aligned). Stops at the
    /// first malformed header rather than read past the buffer.
    package static func parse(_ bytes: some Collection<UInt8>) -> [RouteMessage] {
        let bytes = Array(bytes)
        var messages: [RouteMessage] = []
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(bytes.uint32(at: offset))
            guard length >= 16, offset + length <= bytes.count else { break }
            let type = bytes.uint16(at: offset + 4)
            let body = offset + 16
            switch type {
            case newLink where length >= 32:
                // struct ifinfomsg { u8 family, u8 pad, u16 type, s32 index, u32 flags, u32 change }
                let index = Int32(bitPattern: bytes.uint32(at: body + 4))
                let flags = bytes.uint32(at: body + 8)
                let running = flags & flagUp != 0 && (flags & flagRunning != 0 || flags & flagLowerUp != 0)
                messages.append(.link(index: index, running: running))
            case delLink: messages.append(.linkRemoved)
            case newAddress: messages.append(.addressAdded)
            case delAddress: messages.append(.addressRemoved)
            case newRoute where length >= 28:
                // struct rtmsg { u8 family, u8 dst_len, ... }
                messages.append(.routeAdded(isDefault: bytes[body + 1] == 0))
            case delRoute: messages.append(.routeRemoved)
            default: messages.append(.other(type: type))
            }
            offset += (length + 3) & ~3
        }
        return messages
    }
}

extension Array where Element == UInt8 {
    /// Netlink is in the host's byte order (little-endian on every platform Ferry builds for).
    fileprivate func uint32(at index: Int) -> UInt32 {
        UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16 | UInt32(self[index + 3]) << 24
    }

    fileprivate func uint16(at index: Int) -> UInt16 {
        UInt16(self[index]) | UInt16(self[index + 1]) << 8
    }
}
