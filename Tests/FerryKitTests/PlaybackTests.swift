import FerryKit
import Foundation
import Testing

/// The rule of a playback's change: a position moves it, near the end marks it played, played
/// or unplayed by hand wins, and nonsense is refused.
@Suite struct PlaybackTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aPositionMovesItAndNearTheEndMarksItPlayed() throws {
        let start = Playback(updatedAt: Self.now)
        let middle = try start.applying(PlaybackUpdate(positionSeconds: 600, durationSeconds: 7_200), now: Self.now + 5)
        #expect(middle == Playback(positionSeconds: 600, played: false, updatedAt: Self.now + 5))
        // A two-hour episode: within its last 30 s; a 30-second song: within its last 1.5 s.
        #expect(try start.applying(PlaybackUpdate(positionSeconds: 7_171, durationSeconds: 7_200)).played)
        #expect(try !start.applying(PlaybackUpdate(positionSeconds: 7_169, durationSeconds: 7_200)).played)
        #expect(try start.applying(PlaybackUpdate(positionSeconds: 28.6, durationSeconds: 30)).played)
        #expect(try !start.applying(PlaybackUpdate(positionSeconds: 28, durationSeconds: 30)).played)
        // Without a duration nothing is near an end.
        #expect(try !start.applying(PlaybackUpdate(positionSeconds: 1e9)).played)
    }

    @Test func byHandWinsAndKeepsThePosition() throws {
        let heard = try Playback(positionSeconds: 7_190, played: true, updatedAt: Self.now).applying(PlaybackUpdate(played: false))
        #expect(heard.positionSeconds == 7_190 && !heard.played)
        let marked = try Playback(positionSeconds: 10, updatedAt: Self.now).applying(PlaybackUpdate(positionSeconds: 7_199, durationSeconds: 7_200, played: false))
        #expect(marked.positionSeconds == 7_199 && !marked.played)
        #expect(try Playback(updatedAt: Self.now).applying(PlaybackUpdate(played: true)).played)
    }

    @Test(arguments: [
        PlaybackUpdate(positionSeconds: -1), PlaybackUpdate(positionSeconds: .infinity), PlaybackUpdate(positionSeconds: .nan),
        PlaybackUpdate(positionSeconds: 5, durationSeconds: 0), PlaybackUpdate(positionSeconds: 5, durationSeconds: -3), PlaybackUpdate(),
    ])
    func nonsenseIsRefused(update: PlaybackUpdate) {
        #expect(throws: FerryError.self) { try Playback(updatedAt: Self.now).applying(update) }
    }
}
