import Foundation
@testable import FerryCore
import Testing

@Suite struct LibraryFolderTests {
    // MARK: - safeFolder

    @Test(arguments: [
        ("Downloads", "Downloads"),
        ("Podcasts/Show name", "Podcasts/Show name"),
        ("Music/日本語/Été", "Music/日本語/Été"),
        // Nothing usable: the default folder.
        ("", "Downloads"),
        ("   ", "Downloads"),
        ("/", "Downloads"),
        ("//", "Downloads"),
        (".", "Downloads"),
        ("..", "Downloads"),
        ("../..", "Downloads"),
        ("./../.", "Downloads"),
        ("\u{202E}", "Downloads"),
        ("\u{0}/\u{1B}", "Downloads"),
        // Traversal and absolute paths stay inside.
        ("../../etc", "etc"),
        ("/etc/cron.d", "etc/cron.d"),
        ("Podcasts/../../..", "Podcasts"),
        ("a/../b", "a/b"),
        ("..\\..\\etc", "etc"),
        ("Music\\Albums", "Albums"),  // a backslash is a separator inside a component, too
        // Empty components, dots, whitespace, control and bidi characters.
        ("a//b/", "a/b"),
        (" Music / Albums ", "Music/Albums"),
        (".partial", "partial"),  // cannot reach the library's own .partial folder
        ("a/.partial/b", "a/partial/b"),
        (".hidden/..x./y.", "hidden/x/y"),
        ("x\u{202E}y/\u{0}z\n", "xy/z"),
        // A mark joined to a `/` makes one Character with it: the split is on scalars.
        ("Podcasts/a\u{0D4E}/..\u{0D4E}/.partial", "Podcasts/a\u{0D4E}/\u{0D4E}/partial"),
    ])
    func safeFolder(_ folder: String, _ expected: String) {
        #expect(LibraryFolder.safeFolder(folder) == expected)
    }

    @Test func safeFolderCapsEachComponent() {
        let long = String(repeating: "a", count: 300)
        #expect(LibraryFolder.safeFolder("\(long)/\(long)") == String(repeating: "a", count: 200) + "/" + String(repeating: "a", count: 200))
    }

    @Test(arguments: [
        "../../../../etc/passwd", "/", "a/./b/../c", "\\\\server\\share", ". /. /. ", String(repeating: "../", count: 500),
        "ok/\u{2066}..\u{2069}/x", "..\u{200B}/x",
    ])
    func safeFolderStaysRelativeAndInside(_ folder: String) {
        let safe = LibraryFolder.safeFolder(folder)
        #expect(!safe.isEmpty)
        #expect(!safe.hasPrefix("/"))
        #expect(!safe.contains("\\"))
        for component in safe.split(separator: "/", omittingEmptySubsequences: false) {
            #expect(!component.isEmpty, "\(safe)")
            #expect(!component.hasPrefix("."), "\(safe)")
        }
    }

    // MARK: - contains

    /// A fresh folder: `lib/` (the root, with `sub/` and `file.mp3`), `outside/` (with
    /// `secret.txt`), `lib/escape` → `../outside`, `lib/secret-link` → `../outside/secret.txt`,
    /// `lib/alias` → `sub`, `linkroot` → `lib`.
    struct Sandbox: ~Copyable {
        let base: URL
        var root: URL { base.appendingPathComponent("lib") }
        var outside: URL { base.appendingPathComponent("outside") }

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-library-\(UUID().uuidString)")
            let fm = FileManager.default
            try fm.createDirectory(at: base.appendingPathComponent("lib/sub"), withIntermediateDirectories: true)
            try fm.createDirectory(at: base.appendingPathComponent("outside"), withIntermediateDirectories: true)
            try Data("x".utf8).write(to: base.appendingPathComponent("lib/file.mp3"))
            try Data("secret".utf8).write(to: base.appendingPathComponent("outside/secret.txt"))
            try fm.createSymbolicLink(atPath: base.appendingPathComponent("lib/escape").path, withDestinationPath: "../outside")
            try fm.createSymbolicLink(
                atPath: base.appendingPathComponent("lib/secret-link").path, withDestinationPath: "../outside/secret.txt"
            )
            try fm.createSymbolicLink(atPath: base.appendingPathComponent("lib/alias").path, withDestinationPath: "sub")
            try fm.createSymbolicLink(atPath: base.appendingPathComponent("linkroot").path, withDestinationPath: "lib")
        }

        deinit { try? FileManager.default.removeItem(at: base) }

        func url(_ relative: String) -> URL { base.appendingPathComponent(relative) }
    }

    @Test(arguments: [
        ("lib/file.mp3", true),
        ("lib/sub", true),
        ("lib/sub/new.mp3", true),  // does not exist yet, as in LibraryFolder.place
        ("lib/not/yet/created/new.mp3", true),
        ("lib/alias/new.mp3", true),  // a symlink that stays inside
        ("lib/./sub/../file.mp3", true),
        ("lib/../lib/new.mp3", true),
        ("lib/.partial/1.part", true),
        ("lib", false),  // the root itself is not inside the root
        ("lib/", false),
        ("lib/.", false),
        ("lib/sub/../..", false),
        ("lib/../outside/secret.txt", false),
        ("lib/sub/../../outside/new.mp3", false),
        ("lib/missing/../../outside/new.mp3", false),
        ("lib2/new.mp3", false),  // a sibling whose name starts with the root's
        ("libx", false),
        ("outside/secret.txt", false),
        ("", false),
        // Symlinks that lead out, to existing and to new files.
        ("lib/escape", false),
        ("lib/escape/secret.txt", false),
        ("lib/escape/new.mp3", false),
        ("lib/escape/new/deeper.mp3", false),
        ("lib/secret-link", false),
    ])
    func contains(_ relative: String, _ expected: Bool) throws {
        let sandbox = try Sandbox()
        let library = LibraryFolder(root: sandbox.root)
        #expect(library.contains(sandbox.url(relative)) == expected)
    }

    @Test func containsRefusesAbsolutePathsElsewhere() throws {
        let sandbox = try Sandbox()
        let library = LibraryFolder(root: sandbox.root)
        #expect(!library.contains(URL(fileURLWithPath: "/etc/passwd")))
        #expect(!library.contains(URL(fileURLWithPath: "/")))
        #expect(!library.contains(sandbox.base))
        #expect(!library.contains(URL(fileURLWithPath: sandbox.root.path + "/../outside/secret.txt")))
    }

    @Test(arguments: ["https://example.com", "https://example.com/x", "file:", "relative/path"])
    func containsRefusesNonFileURLsWithoutHanging(_ text: String) throws {
        let sandbox = try Sandbox()
        #expect(!LibraryFolder(root: sandbox.root).contains(try #require(URL(string: text))))
    }

    @Test func rootWithTrailingSlashOrDots() throws {
        let sandbox = try Sandbox()
        for root in [
            URL(fileURLWithPath: sandbox.root.path + "/", isDirectory: true),
            URL(fileURLWithPath: sandbox.root.path + "/sub/.."),
        ] {
            let library = LibraryFolder(root: root)
            #expect(library.contains(sandbox.url("lib/sub/new.mp3")), "\(root.path)")
            #expect(!library.contains(sandbox.url("lib2/new.mp3")), "\(root.path)")
        }
    }

    /// A library reached through a symlink (a symlinked home or Downloads folder, or /tmp and /var
    /// on macOS) must accept files that do not exist yet.
    @Test(arguments: [
        ("linkroot/new.mp3", true),
        ("linkroot/sub/new.mp3", true),
        ("linkroot/not/yet/new.mp3", true),
        ("linkroot/file.mp3", true),
        ("lib/new.mp3", true),  // the same folder by its real path
        ("linkroot/escape/new.mp3", false),
        ("linkroot/../outside/new.mp3", false),
    ])
    func symlinkedRoot(_ relative: String, _ expected: Bool) throws {
        let sandbox = try Sandbox()
        let library = LibraryFolder(root: sandbox.url("linkroot"))
        #expect(library.contains(sandbox.url(relative)) == expected)
    }

    @Test func rootThatDoesNotExistYet() throws {
        let sandbox = try Sandbox()
        let library = LibraryFolder(root: sandbox.url("new-root"))
        #expect(library.contains(sandbox.url("new-root/Downloads/new.mp3")))
        #expect(!library.contains(sandbox.url("new-root-2/new.mp3")))
        #expect(!library.contains(sandbox.url("lib/new.mp3")))
    }

    @Test func partialsAndPartURLsAreInside() throws {
        let sandbox = try Sandbox()
        let library = LibraryFolder(root: sandbox.root)
        #expect(library.partURL(for: 42).lastPathComponent == "42.part")
        #expect(library.contains(library.partURL(for: 42)))
        #expect(library.contains(library.absolute("Downloads/x.mp3")))
        #expect(library.contains(library.absolute(LibraryFolder.safeFolder("../../outside") + "/x.mp3")))
    }
}
