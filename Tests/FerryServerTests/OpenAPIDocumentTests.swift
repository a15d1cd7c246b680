import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The OpenAPI document is served, and every operation it lists exists on the daemon.
@Suite struct OpenAPIDocumentTests {
    /// (method, path) pairs from the document's `paths`, read line by line (no YAML library).
    static func operations(_ yaml: String) -> [(method: String, path: String)] {
        var result: [(String, String)] = []
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, let first = line.first, first != " " { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "delete", "patch"].contains(key) { result.append((key.uppercased(), path)) }
            }
        }
        return result
    }

    @Test func everyDocumentedOperationIsServed() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let document = try await d.raw(.GET, "/v1/openapi.yaml")
                #expect(document.status == 200)
                #expect(document.body.hasPrefix("openapi: 3.1.0"))
                let operations = Self.operations(document.body)
                #expect(operations.count >= 13)
                for (method, path) in operations where path != "/v1/shutdown" {
                    let concrete = path.replacingOccurrences(of: "{id}", with: "999").replacingOccurrences(of: "{session}", with: "cli")
                    if path.hasSuffix("/events") { continue }  // endless; covered by EventStreamTests
                    let response = try await d.raw(.init(rawValue: method), concrete, headers: [("Content-Type", "application/json")], body: method == "POST" ? "{}" : nil)
                    #expect(!response.body.contains("There is no \(method)"), "\(method) \(path) is documented but not served")
                }
            }
        }
    }

    /// The document is static text: its pause and cancel descriptions name the wait by number.
    @Test func pauseAndCancelDescribeTheDaemonsStopWait() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let phrase = "or after \(Transfer.stopWait.components.seconds) seconds if"
        #expect(document.components(separatedBy: phrase).count - 1 == 2, "pause and cancel should say \"\(phrase)\"")
    }

    @Test func theRepositoryCopyIsTheServedOne() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let resource = try String(contentsOf: root.appendingPathComponent("Sources/FerryServer/Resources/openapi.yaml"), encoding: .utf8)
        #expect(docs == resource)
    }
}
