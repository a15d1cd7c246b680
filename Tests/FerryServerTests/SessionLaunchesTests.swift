import Testing

@testable import FerryServer

/// When the daemon starts a session's program (as iOS relaunches an app): once per event, one at
/// a time, and an event that came while the program ran or a client listened is kept for later.
struct SessionLaunchesTests {
    typealias Launches = TransferAnnouncer.Launches

    @Test func oneProgramAtATimeAndOncePerEvent() {
        let launches = Launches()
        #expect(launches.claim("s", through: 5, listened: false) == .start)
        #expect(launches.isRunning("s"))
        // Another session is its own.
        #expect(launches.claim("t", through: 6, listened: false) == .start)
        launches.ended("s")
        #expect(launches.claim("s", through: 5, listened: false) == .covered)
        #expect(launches.claim("s", through: 4, listened: false) == .covered)
        #expect(launches.claim("s", through: 7, listened: false) == .start)
    }

    @Test func anEventWhileTheProgramRunsIsKeptForOneWaitingCall() {
        let launches = Launches()
        #expect(launches.claim("s", through: 1, listened: false) == .start)
        #expect(launches.claim("s", through: 2, listened: false) == .missed(watching: true))
        #expect(launches.claim("s", through: 3, listened: false) == .missed(watching: false))
        launches.ended("s")
        // The newest missed event, once; then nobody waits.
        #expect(launches.takeMissed("s") == 3)
        #expect(launches.takeMissed("s") == nil)
        #expect(launches.claim("s", through: 3, listened: false) == .start)
    }

    @Test func aListenerThatAcknowledgedWhatWasMissedEndsTheWait() {
        let launches = Launches()
        #expect(launches.claim("s", through: 4, listened: true) == .missed(watching: true))
        #expect(launches.claim("s", through: 6, listened: true) == .missed(watching: false))
        #expect(!launches.dropMissed("s", upTo: 5), "event 6 is not acknowledged yet")
        #expect(launches.dropMissed("s", upTo: 6))
        #expect(launches.takeMissed("s") == nil)
        // The next missed event has a waiting call again.
        #expect(launches.claim("s", through: 7, listened: true) == .missed(watching: true))
    }
}
