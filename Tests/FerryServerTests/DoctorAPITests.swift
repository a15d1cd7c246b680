#if canImport(Glibc)
import Glibc
#endif
import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The doctor inside a running daemon (`GET`/`POST /v1/doctor`): it mends only what no
/// transfer owns, while transfers run beside it.
@Suite struct DoctorAPITests {
    @Test func theRunningDaemonReportsAndMendsWithoutTouchingLiveTransfers() async throws {
        try await Origin.run { origin, base in
            let held = Origin.Gate()
            origin.serve("/running", .init(data: Origin.bytes(512 << 10)))
            origin.script("/running", [.holdAfter(64 << 10, held)])
            origin.serve("/paused", .init(data: Origin.bytes(512 << 10, seed: 2)))
            origin.script("/paused", [.holdAfter(64 << 10, held)])
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let running = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("running").absoluteString])).transfers[0].id
                    let paused = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("paused").absoluteString])).transfers[0].id
                    for id in [running, paused] {
                        try await eventually("transfer \(id) to have bytes") { try await d.client.transfer(id).bytesReceived > 0 }
                    }
                    _ = try await d.client.pause(paused)
                    try await eventually("the pause to checkpoint") { try await d.client.transfer(paused).state == .paused }
                    let partials = d.paths.library.appendingPathComponent(".partial")
                    try FileManager.default.removeItem(at: partials.appendingPathComponent("\(paused).part"))
                    let orphan = partials.appendingPathComponent("9999.part")
                    try Data(count: 100).write(to: orphan)
                    #expect(chmod(d.paths.token.path, 0o640) == 0)

                    let report = try await d.client.doctor(fix: false)
                    #expect(report.status == .problem)
                    let parts = try #require(report.checks.first { $0.name == "partFiles" })
                    #expect(parts.details.count == 2 && parts.details[0].hasPrefix(orphan.path), "\(parts)")
                    #expect(parts.details[1].hasPrefix("transfer \(paused) "), "\(parts)")
                    #expect(report.checks.first { $0.name == "listeners" }?.summary == "listening: API \(d.baseURL)")
                    #expect(report.checks.first { $0.name == "journal" }?.status == .ok)
                    #expect(report.checks.first { $0.name == "permissions" }?.details.contains("\(d.paths.token.path) has mode 640: readable by other users") == true)

                    let fixed = try await d.client.doctor(fix: true)
                    #expect(fixed.fixed && fixed.status == .warning, "only the lost part file is left, explained: \(fixed)")
                    #expect(!FileManager.default.fileExists(atPath: orphan.path))
                    #expect(FileManager.default.fileExists(atPath: partials.appendingPathComponent("\(running).part").path), "a running transfer's part file is its own")
                    let left = try #require(fixed.checks.first { $0.name == "partFiles" })
                    #expect(left.status == .warning && left.advice?.contains("starts again from its first byte") == true, "\(left)")
                    held.open()
                    try await eventually("the running one to finish") { try await d.client.transfer(running).state == .completed }
                    _ = try await d.client.resume(paused)
                    try await eventually("the paused one to finish from its first byte") { try await d.client.transfer(paused).state == .completed }
                    #expect(try await d.client.transfer(paused).sha256 == Origin.sha256(Origin.bytes(512 << 10, seed: 2)))
                }
            }
        }
    }
}
