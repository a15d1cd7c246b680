import Foundation
import Testing

/// Examples/HalfTunes is the tutorial's networking code as Tests/Fixtures/halftunes holds it
/// (copied from the project's shared fixtures), changed only as a port to Linux may change it:
/// `import Foundation` and `import UIKit` become `import FerryURLSession`, and the lines marked
/// `// UIKit` (screens) are left out. The starter project's pieces are in Starter.swift, the
/// command-line driver in main.swift.
@Suite struct HalfTunesSourceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func ported(_ text: String) -> String {
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("import Foundation") || line.hasPrefix("import UIKit") {
                if !lines.contains("import FerryURLSession") { lines.append("import FerryURLSession") }
            } else if !line.contains("// UIKit") {
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    @Test func theTutorialsFilesAreTheFixturesWithOnlyTheirImportsChangedAndScreensLeftOut() throws {
        let fixtures = Self.root.appendingPathComponent("Tests/Fixtures/halftunes")
        let example = Self.root.appendingPathComponent("Examples/HalfTunes")
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(names.count == 7)
        var compared = 0
        for name in names {
            let fixture = try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
            let code = Self.ported(fixture).trimmingCharacters(in: .whitespacesAndNewlines)
            // Track.swift is all comments (Starter.swift has Track). AppDelegate.swift keeps one line: its
            // completion handler, a global variable once the class (UIKit) is left out.
            if code.components(separatedBy: "\n").allSatisfy({ $0.hasPrefix("//") || $0.hasPrefix("import") || $0.isEmpty }) {
                #expect(!FileManager.default.fileExists(atPath: example.appendingPathComponent(name).path))
                continue
            }
            let ported = try String(contentsOf: example.appendingPathComponent(name), encoding: .utf8)
            #expect(ported.trimmingCharacters(in: .whitespacesAndNewlines) == code, "\(name) differs from the fixture beyond its imports")
            compared += 1
        }
        #expect(compared == 6)
    }
}
