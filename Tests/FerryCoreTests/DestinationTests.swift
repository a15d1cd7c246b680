import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Files where the user says: a folder and a name of theirs, the part file hidden beside the
/// file, no file replaced unless asked, a session's own folder, another file system, and
/// destinations refused when the transfer is created.
@Suite struct DestinationTests {
    static func get(
        _ h: EngineHarness, _ url: URL, directory: String?, name: String? = nil, overwrite: Bool = false, create: Bool = false,
        session: String = "test"
    ) async throws -> Transfer {
        try await h.engine.enqueue(
            .init(urls: [url], session: session, directory: directory, createDirectory: create, outputName: name, overwrite: overwrite)
        )[0]
    }

    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// While it runs, the bytes wait in `.NAME.ID.ferry-part` in the folder; then the file is
    /// there under its name, and nothing went through the library.
    @Test func aFileGoesWhereItIsToldWithItsPartFileBeside() async throws {
        let file = Origin.File(data: Origin.bytes(1_500_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(500_000, gate)])
            try await withTemporaryDirectory { home in
                let out = home.appendingPathComponent("isos")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), directory: out.path, name: "debian \"12\".iso")
                    #expect(t.directory == out.path)
                    try await h.wait(t.id, bytes: 500_000)
                    #expect(Self.names(in: out) == [".debian \"12\".iso.\(t.id).ferry-part"])
                    #expect(!h.partFileExists(t.id))
                    gate.open()
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.path == out.appendingPathComponent("debian \"12\".iso").path)
                    #expect(Self.names(in: out) == ["debian \"12\".iso"])
                    #expect(try Data(contentsOf: out.appendingPathComponent("debian \"12\".iso")) == file.data)
                    #expect(Self.names(in: home.appendingPathComponent("library/Downloads")).isEmpty)
                }
            }
        }
    }

    /// An existing file is kept (the new one is `name (2).ext`) unless the transfer may
    /// overwrite it.
    @Test(arguments: [false, true])
    func anExistingFileIsReplacedOnlyWhenAsked(overwrite: Bool) async throws {
        let file = Origin.File(data: Origin.bytes(300_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let out = home.appendingPathComponent("out")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                try Data("mine".utf8).write(to: out.appendingPathComponent("x.bin"))
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), directory: out.path, name: "x.bin", overwrite: overwrite)
                    let done = try await h.wait(t.id, for: .completed)
                    if overwrite {
                        #expect(Self.names(in: out) == ["x.bin"])
                        #expect(try Data(contentsOf: out.appendingPathComponent("x.bin")) == file.data)
                    } else {
                        #expect(Self.names(in: out) == ["x (2).bin", "x.bin"])
                        #expect(try Data(contentsOf: out.appendingPathComponent("x.bin")) == Data("mine".utf8))
                        #expect(done.path == out.appendingPathComponent("x (2).bin").path)
                    }
                }
            }
        }
    }

    /// A session's own folder, and the server's name when none is given; `createDirectory`
    /// makes a folder that does not exist.
    @Test func aSessionsFolderAndACreatedOne() async throws {
        let file = Origin.File(data: Origin.bytes(200_000), contentDisposition: "attachment; filename=\"report.pdf\"")
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let session = home.appendingPathComponent("session-folder")
                let made = home.appendingPathComponent("made/deeper")
                try FileManager.default.createDirectory(at: session, withIntermediateDirectories: true)
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    _ = try await h.engine.updateOptions(session: "work", .init(set: TransferOptions(directory: session.path)))
                    let a = try await Self.get(h, base.appendingPathComponent("f"), directory: nil, session: "work")
                    #expect(try await h.wait(a.id, for: .completed).path == session.appendingPathComponent("report.pdf").path)
                    let b = try await Self.get(h, base.appendingPathComponent("f"), directory: made.path, create: true)
                    #expect(try await h.wait(b.id, for: .completed).path == made.appendingPathComponent("report.pdf").path)
                }
            }
        }
    }

    @Test(arguments: [
        ("relative/path", nil as String?, "absolute"),
        ("/nonexistent-ferry-folder/x", nil, "does not exist"),
        ("/etc/hostname", nil, "not a folder"),
        ("/tmp", "a/b", "not a file name"),
        ("/tmp", "..", "not a file name"),
        ("/tmp", ".", "not a file name"),
        ("/tmp", "", "not a file name"),
        ("/tmp", "nul\u{0}here", "not a file name"),
    ])
    func badDestinationsAreRefusedAtCreationAndNothingIsJournaled(directory: String, name: String?, says: String) async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home, configuration: .fast) { h in
                do {
                    _ = try await Self.get(h, URL(string: "http://127.0.0.1:9/x")!, directory: directory, name: name)
                    Issue.record("\(directory) \(name ?? "") was accepted")
                } catch let error as FerryError {
                    #expect(error.message.contains(says), "\(error.message)")
                }
                #expect(try await h.journal.transfers().isEmpty)
                #expect(!FileManager.default.fileExists(atPath: "/nonexistent-ferry-folder"))
            }
        }
    }

    /// A read-only folder (a read-only tmpfs: root may write anywhere else) is refused at
    /// creation; a folder on another file system (a tmpfs) gets its part file there, so the last
    /// step is a rename on that file system.
    @Test func readOnlyAndOtherFileSystems() async throws {
        guard getuid() == 0 else {
            print("skipped: mounting a tmpfs needs root")
            return
        }
        let file = Origin.File(data: Origin.bytes(2_500_000), bytesPerSecond: 2_000_000)
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let readOnly = home.appendingPathComponent("ro")
                let tmpfs = home.appendingPathComponent("tmpfs")
                for folder in [readOnly, tmpfs] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
                try Self.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", readOnly.path])
                defer { try? Self.run(["umount", readOnly.path]) }
                try Self.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", tmpfs.path])
                defer { try? Self.run(["umount", tmpfs.path]) }
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    await #expect(throws: FerryError.self) {
                        try await Self.get(h, base.appendingPathComponent("f"), directory: readOnly.path, name: "x")
                    }
                    let t = try await Self.get(h, base.appendingPathComponent("f"), directory: tmpfs.path, name: "x.bin")
                    try await h.wait(t.id, bytes: 200_000)
                    #expect(Self.names(in: tmpfs).contains(".x.bin.\(t.id).ferry-part"))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(Self.names(in: tmpfs) == ["x.bin"])
                }
            }
        }
    }

    static func run(_ arguments: [String]) throws {
        let result = try ChildProcess.capture("/usr/bin/env", arguments: arguments)
        guard result.status == 0 else { throw TestFailure("\(arguments.joined(separator: " ")) exited \(result.status): \(result.error)") }
    }

    /// Removing a transfer with its file deletes the file it placed in the user's folder.
    @Test func removingWithTheFileDeletesItInTheUsersFolder() async throws {
        let file = Origin.File(data: Origin.bytes(100_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let out = home.appendingPathComponent("out")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), directory: out.path, name: "gone.bin")
                    try await h.wait(t.id, for: .completed)
                    try await h.engine.remove(t.id, deleteFile: true)
                    #expect(Self.names(in: out).isEmpty)
                }
            }
        }
    }
}
