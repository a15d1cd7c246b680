import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The SHA-256 of a part file, read back from the file as it grows.
@Suite struct FileHasherTests {
    @Test func hashesAFileAsItGrowsAndAfterItIsCutToNothing() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("a.part")
            let data = Origin.bytes(3_000_000, seed: 6)
            let part = try PartFile(url: url)
            let hasher = FileHasher(url: url)
            // Uneven growth, some of it past one read's size, some of it announced twice.
            for end in [1, 70_000, 70_000, 1_000_000, 2_999_999, 3_000_000] {
                try data[Int(part.length)..<end].withUnsafeBytes { try part.append([$0]) }
                hasher.hash(through: part.length)
            }
            #expect(try await hasher.finalize(length: 3_000_000) == data.sha256Hex)

            // Cut to nothing and written anew: only the new bytes count.
            try part.truncate(to: 0)
            hasher.reset()
            try data[0..<12_345].withUnsafeBytes { try part.append([$0]) }
            hasher.hash(through: part.length)
            #expect(try await hasher.finalize(length: 12_345) == data[0..<12_345].sha256Hex)
            hasher.close()
            part.close()
        }
    }

    @Test func aFileShorterThanAnnouncedIsAnErrorNotAWrongHash() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("a.part")
            let part = try PartFile(url: url)
            try Origin.bytes(1000, seed: 7).withUnsafeBytes { try part.append([$0]) }
            let hasher = FileHasher(url: url)
            hasher.hash(through: 2000)
            let error = await #expect(throws: FerryError.self) { try await hasher.finalize(length: 2000) }
            #expect(error?.message.contains("shorter than the 2000 bytes") == true)
            // A hash that stopped short of the length asked for is not returned either.
            let other = FileHasher(url: url)
            other.hash(through: 500)
            await #expect(throws: FerryError.self) { try await other.finalize(length: 1000) }
            part.close()
        }
    }

    @Test func aMissingFileIsAClearError() async throws {
        try await withTemporaryDirectory { folder in
            let hasher = FileHasher(url: folder.appendingPathComponent("gone.part"))
            hasher.hash(through: 10)
            let error = await #expect(throws: FerryError.self) { try await hasher.finalize(length: 10) }
            #expect(error?.message.contains("Could not open") == true)
        }
    }
}
