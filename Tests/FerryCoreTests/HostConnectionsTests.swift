import Testing

@testable import FerryCore

/// The per-host connection cap across transfers, and in a cluster each member's share of it.
@Suite struct HostConnectionsTests {
    static func open(_ hosts: HostConnections, _ host: String, cap: Int) -> Int {
        hosts.enter(host)  // A transfer's first connection is always allowed.
        var open = 1
        while hosts.tryEnter(host, cap: cap) { open += 1 }
        return open
    }

    @Test func oneMachineKeepsTheWholeCap() {
        let hosts = HostConnections()
        #expect(Self.open(hosts, "a.example", cap: 16) == 16)
        #expect(Self.open(hosts, "b.example", cap: 4) == 4)
        hosts.leave("a.example")
        #expect(hosts.tryEnter("a.example", cap: 16) && !hosts.tryEnter("a.example", cap: 16))
    }

    @Test func threeMembersTakeAThirdEachAndNeverNone() {
        let hosts = HostConnections()
        hosts.share(among: 3)
        #expect(Self.open(hosts, "a.example", cap: 16) == 5)
        hosts.share(among: 40)
        // A member's share is at least one connection: its transfer's first, always allowed.
        #expect(Self.open(hosts, "b.example", cap: 16) == 1)
        hosts.share(among: 0)
        #expect(Self.open(hosts, "c.example", cap: 16) == 16)
    }
}
