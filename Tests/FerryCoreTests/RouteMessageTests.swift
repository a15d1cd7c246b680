import Testing

@testable import FerryCore

/// rtnetlink datagrams as the kernel sends them (little-endian), parsed without a socket.
@Suite struct RouteMessageTests {
    /// One message: `nlmsghdr` (length, type, flags, seq, pid) and its body, padded to 4 bytes.
    static func message(type: UInt16, body: [UInt8]) -> [UInt8] {
        let length = UInt32(16 + body.count)
        var bytes = le(length) + le16(type) + le16(0) + le(1) + le(0) + body
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func le(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// `ifinfomsg`: family, pad, type, index, flags, change.
    static func link(index: UInt32, flags: UInt32) -> [UInt8] {
        message(type: 16, body: [0, 0] + le16(1) + le(index) + le(flags) + le(0xFFFF_FFFF))
    }

    /// `rtmsg`: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
    static func route(type: UInt16 = 24, prefixLength: UInt8) -> [UInt8] {
        message(type: type, body: [2, prefixLength, 0, 0, 254, 4, 0, 1] + le(0))
    }

    @Test func aLinkThatIsUpWithACarrierMayReconnect() {
        let up = RouteMessage.parse(Self.link(index: 3, flags: 0x1 | 0x40 | 0x1_0000))
        #expect(up == [.link(index: 3, running: true)])
        #expect(up[0].mayReconnect)
        // Up without a carrier (cable out), or down: nothing to try yet.
        #expect(RouteMessage.parse(Self.link(index: 3, flags: 0x1)) == [.link(index: 3, running: false)])
        #expect(RouteMessage.parse(Self.link(index: 3, flags: 0x40 | 0x1_0000)) == [.link(index: 3, running: false)])
        #expect(!RouteMessage.link(index: 3, running: false).mayReconnect)
    }

    @Test func routesAndAddressesComingMayReconnectGoingDoNot() {
        #expect(RouteMessage.parse(Self.route(prefixLength: 0)) == [.routeAdded(isDefault: true)])
        #expect(RouteMessage.parse(Self.route(prefixLength: 24)) == [.routeAdded(isDefault: false)])
        #expect(RouteMessage.parse(Self.route(type: 25, prefixLength: 0)) == [.routeRemoved])
        #expect(RouteMessage.parse(Self.message(type: 20, body: [2, 24, 0, 0] + Self.le(3))) == [.addressAdded])
        #expect(!RouteMessage.routeRemoved.mayReconnect && !RouteMessage.addressRemoved.mayReconnect && !RouteMessage.linkRemoved.mayReconnect)
        #expect(RouteMessage.routeAdded(isDefault: false).mayReconnect && RouteMessage.addressAdded.mayReconnect)
    }

    @Test func aDatagramCarriesSeveralMessages() {
        let datagram = Self.link(index: 2, flags: 0x1 | 0x40) + Self.route(prefixLength: 0) + Self.message(type: 3, body: [0, 0, 0, 0])
        #expect(RouteMessage.parse(datagram) == [.link(index: 2, running: true), .routeAdded(isDefault: true), .other(type: 3)])
    }

    @Test func aTruncatedOrLyingHeaderStopsTheParse() {
        let good = Self.route(prefixLength: 0)
        #expect(RouteMessage.parse(good + Array(Self.link(index: 1, flags: 1).prefix(20))) == [.routeAdded(isDefault: true)])
        var lying = Self.route(prefixLength: 0)
        lying[0] = 200  // claims 200 bytes
        #expect(RouteMessage.parse(lying).isEmpty)
        var tiny = Self.route(prefixLength: 0)
        tiny[0] = 4  // shorter than a header
        #expect(RouteMessage.parse(tiny).isEmpty)
        #expect(RouteMessage.parse([UInt8]()).isEmpty)
    }
}

@Suite struct NetworkChangesTests {
    @Test func aWaiterWakesOnTheNextChangeAndNeverMissesOne() async {
        let changes = NetworkChanges()
        let seen = changes.generation
        changes.changed()  // before anyone waits: still seen
        await changes.wait(after: seen)
        let waiter = Task { await changes.wait(after: changes.generation) }
        try? await Task.sleep(for: .milliseconds(50))
        changes.changed()
        await waiter.value
        #expect(changes.generation == seen + 2)
    }

    @Test func aCancelledWaiterReturns() async {
        let changes = NetworkChanges()
        let waiter = Task { await changes.wait(after: changes.generation) }
        waiter.cancel()
        await waiter.value
        #expect(changes.generation == 0)
    }
}

/// The watcher tells at a burst's first news (and again when it has settled).
@Suite struct NewsBurstTests {
    @Test func theFirstNewsAfterAQuietSpellStartsABurst() {
        var burst = NewsBurst()
        let start = ContinuousClock.now
        let settle = Duration.milliseconds(100)
        let told = [0, 30, 120, 400].map { burst.news(at: start + .milliseconds($0), settle: settle) }
        // 30 and 120 ms: each within 100 ms of the news before it, the same burst.
        #expect(told == [true, false, false, true])
    }
}
