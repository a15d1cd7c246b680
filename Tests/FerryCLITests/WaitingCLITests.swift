import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// What a person sees of a waiting transfer, and the resource timeout's input checks.
@Suite(.serialized) struct WaitingCLITests {
    @Test func lsShowsWhyATransferWaitsAndWhenItTriesAgain() async throws {
        try await CommandRunner.withHome { home in
            let refusing = try RefusingPort()
            defer { withExtendedLifetime(refusing) {} }
            let port = refusing.port
            let get = try await CommandRunner.ferry(["get", "--no-wait", "http://127.0.0.1:\(port)/big.iso"], home: home)
            #expect(get.status == 0, "\(get)")
            var listing = ""
            try await eventually("the transfer to wait", timeout: .seconds(20)) {
                listing = try await CommandRunner.ferry(["ls"], home: home).stdout
                return listing.contains("waiting")
            }
            // The first backoff is about a second: "next try in 1 s", or "trying again now".
            #expect(listing.contains("big.iso (127.0.0.1 refused the connection; next try in") || listing.contains("big.iso (127.0.0.1 refused the connection; trying again now)"), "\(listing)")
            let json = try await CommandRunner.ferry(["ls", "--json"], home: home)
            let transfer = try #require(try FerryJSON.decoder().decode([Transfer].self, from: Data(json.stdout.utf8)).first)
            #expect(transfer.state == .waiting)
            #expect(transfer.waitReason == "127.0.0.1 refused the connection")
            #expect(transfer.retryAt != nil)
        }
    }

    @Test func aResourceTimeoutOfZeroOrNonsenseIsRefusedAndNothingIsQueued() async throws {
        try await CommandRunner.withHome { home in
            for value in ["0", "-5m", "soon", "0d"] {
                let get = try await CommandRunner.ferry(["get", "--no-wait", "--resource-timeout", value, "http://127.0.0.1:9/x"], home: home)
                #expect(get.status != 0, "\(value): \(get)")
                #expect(get.stderr.contains("duration") || get.stderr.contains("longer than zero"), "\(value): \(get.stderr)")
            }
            let set = try await CommandRunner.ferry(["session", "set", "cli", "--resource-timeout", "2h"], home: home)
            #expect(set.status == 0, "\(set)")
            #expect(set.stdout.contains("resource timeout 2 h"), "\(set.stdout)")
            let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
            #expect(try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8)).isEmpty)
        }
    }
}
