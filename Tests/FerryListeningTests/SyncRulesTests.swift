import FerryCore
@testable import FerryListening
import FerryKit
import Foundation
import Testing

/// The sync API's pure parts: failed logins slowed down, episode actions read strictly,
/// and passwords hashed.
@Suite struct SyncRulesTests {
    @Test func failedLoginsWaitLongerEachTimeUntilASuccess() {
        var throttle = LoginThrottle()
        let start = Date(timeIntervalSince1970: 1_000_000)
        let delays = (0..<7).map { throttle.failed(from: "10.0.0.9", now: start.addingTimeInterval(Double($0))) }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        // Another address has its own count; a success forgets them; so do ten quiet minutes.
        #expect(throttle.failed(from: "10.0.0.10", now: start) == .milliseconds(500))
        throttle.succeeded(from: "10.0.0.9")
        #expect(throttle.failed(from: "10.0.0.9", now: start) == .milliseconds(500))
        #expect(throttle.failed(from: "10.0.0.10", now: start.addingTimeInterval(601)) == .milliseconds(500))
    }

    @Test func episodeActionsAreReadStrictly() throws {
        let decoder = JSONDecoder()
        func decode(_ json: String) throws -> EpisodeAction { try decoder.decode(EpisodeAction.self, from: Data(json.utf8)) }
        let play = try decode(#"{"podcast": "https://a.example/f.xml", "episode": "https://a.example/1.mp3", "action": "PLAY", "timestamp": "2009-12-12T09:00:00", "started": 15, "position": 120, "total": 500, "guid": "g1"}"#)
        #expect(play.action == .play && play.timestamp == 1_260_608_400 && play.position == 120 && play.guid == "g1")
        #expect(try decode(#"{"podcast": "https://a.example/f.xml", "episode": "e", "action": "play", "timestamp": "2009-12-12T09:00:00.123Z", "position": 1}"#).timestamp == 1_260_608_400)
        // GPodderSync's -1 for none.
        let download = try decode(#"{"podcast": "https://a.example/f.xml", "episode": "e", "action": "download", "started": -1, "position": -1, "total": -1}"#)
        #expect(download.position == nil && download.started == nil)
        for bad in [
            #"{"podcast": "a.example", "episode": "e", "action": "play"}"#,
            #"{"podcast": "https://a.example/", "episode": "", "action": "play"}"#,
            #"{"podcast": "https://a.example/", "episode": "e", "action": "rewind"}"#,
            #"{"podcast": "https://a.example/", "episode": "e", "action": "play", "timestamp": "2009-13-12T09:00:00"}"#,
            #"{"podcast": "https://a.example/", "episode": "e", "action": "play", "started": 3}"#,
            #"{"podcast": "https://a.example/", "episode": "e", "action": "play", "position": 2.5}"#,
        ] {
            #expect(throws: DecodingError.self, "\(bad)") { try decode(bad) }
        }
        // Written as gpodder.net writes them; only a play carries positions.
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(play)) as? [String: Any]
        #expect(written?["timestamp"] as? String == "2009-12-12T09:00:00" && written?["action"] as? String == "play")
        #expect(EpisodeAction.wire(EpisodeAction.seconds(fromWire: "2026-02-28T23:59:59")!) == "2026-02-28T23:59:59")
    }

    @Test func passwordsAreSaltedHashes() throws {
        let one = try AccountPassword.hash("correct horse")
        let two = try AccountPassword.hash("correct horse")
        #expect(one != two && !one.contains("correct"))
        #expect(AccountPassword.verify("correct horse", against: one) && AccountPassword.verify("correct horse", against: two))
        #expect(!AccountPassword.verify("correct horsE", against: one))
        #expect(!AccountPassword.verify("correct horse", against: "scrypt$nonsense"))
    }
}
