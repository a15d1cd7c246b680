import FerryModel
import Foundation
import Testing

@testable import FerryCore

/// When a session may run by the network and the hours: URLSession's
/// allowsExpensiveNetworkAccess and isDiscretionary as the daemon's session options, decided by
/// the control's limits (pure), and the default route read from the kernel's table.
@Suite struct NetworkConstraintTests {
    static let daemon = TransferJournalKeys.daemonOptions

    @Test func aMeteredNetworkHoldsTheSessionsThatDoNotAllowIt() {
        let options: [String: TransferOptions] = [
            "big": TransferOptions(allowsMeteredNetwork: false),
            "small": TransferOptions(allowsMeteredNetwork: true),
            "other": TransferOptions(maxConcurrent: 2),
        ]
        let now = Date()
        #expect(TransferControl.Limits(options: options, maxConcurrent: 4, now: now, metered: false).paused.isEmpty)
        let metered = TransferControl.Limits(options: options, maxConcurrent: 4, now: now, metered: true)
        #expect(metered.paused == ["big"])
        #expect(metered.holds("big") && !metered.holds("small") && !metered.holds("cli"))
        var daemonWide = options
        daemonWide[Self.daemon] = TransferOptions(allowsMeteredNetwork: false)
        #expect(TransferControl.Limits(options: daemonWide, maxConcurrent: 4, now: now, metered: true).holds("cli"), "the daemon's word: every session")
    }

    @Test func aDiscretionarySessionRunsOnlyInsideTheDaemonsWindows() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let night = try RateSchedule.window(parsing: "Mon-Sun 01:00-06:00", bytesPerSecond: nil)
        let options: [String: TransferOptions] = [
            Self.daemon: TransferOptions(schedule: RateSchedule(windows: [night], outside: .unlimited)),
            "nightly": TransferOptions(discretionary: true),
        ]
        let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: Date())!
        let three = calendar.date(bySettingHour: 3, minute: 0, second: 0, of: Date())!
        #expect(TransferControl.Limits(options: options, maxConcurrent: 4, now: noon).holds("nightly"))
        #expect(!TransferControl.Limits(options: options, maxConcurrent: 4, now: noon).holds("cli"), "others run at noon")
        #expect(!TransferControl.Limits(options: options, maxConcurrent: 4, now: three).holds("nightly"))
        let noSchedule = ["nightly": TransferOptions(discretionary: true)]
        #expect(!TransferControl.Limits(options: noSchedule, maxConcurrent: 4, now: noon).holds("nightly"), "no cheap hours named: any time")
    }

    @Test func theDefaultRoutesInterfacesComeFromTheKernelsTable() {
        let table = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            wwan0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
            eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            """
        #expect(NetworkMetering.defaultRouteInterfaces(table) == ["wwan0"])
        #expect(NetworkMetering.networkManagerSaysMetered(1) && NetworkMetering.networkManagerSaysMetered(3))
        #expect(!NetworkMetering.networkManagerSaysMetered(2) && !NetworkMetering.networkManagerSaysMetered(nil))
        #expect(NetworkMetering.parseBusctlUInt32("u 1\n") == 1)
        #expect(NetworkMetering.parseBusctlUInt32("s \"yes\"") == nil)
        #expect(NetworkMetering.parseBusctlUInt32("") == nil)
    }

    @Test func theyAreASessionsOrTheDaemonsNotATransfers() throws {
        #expect(throws: FerryError.self) { try TransferEngine.refuseSessionWide(TransferOptions(allowsMeteredNetwork: false)) }
        #expect(throws: FerryError.self) { try TransferEngine.refuseSessionWide(TransferOptions(discretionary: true)) }
        try TransferEngine.refuseSessionWide(TransferOptions(maxRetries: 2))
        #expect(throws: FerryError.self) { try TransferOptions(meteredInterfaces: ["a b"]).validate() }
    }
}
