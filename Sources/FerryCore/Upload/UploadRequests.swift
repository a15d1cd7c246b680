import FerryModel
import Foundation

/// The requests of the three upload protocols, as pure functions of what is known: which
/// headers to send and what the answers mean. `UploadAttempt` performs them.
enum UploadRequests {
    /// The IETF draft version Ferry speaks (as Apple's URLSession does).
    static let ietfInteropVersion = "6"
    static let tusVersion = "1.0.0"

    /// What `OPTIONS` says the server speaks.
    static func discover(status: Int, headers: [(name: String, value: String)]) -> UploadProtocol {
        func value(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        if (200...299).contains(status), value("tus-version") != nil || value("tus-resumable") != nil { return .tus }
        if value("upload-draft-interop-version") != nil || value("upload-limit") != nil
            || (value("accept-patch")?.contains("application/partial-upload") ?? false)
        {
            return .ietf
        }
        return .plain
    }

    // MARK: tus 1.0

    static func tusCreation(size: Int64, fileName: String) -> [(String, String)] {
        [
            ("Tus-Resumable", tusVersion), ("Upload-Length", String(size)),
            ("Upload-Metadata", "filename " + Data(fileName.utf8).base64EncodedString()), ("Content-Length", "0"),
        ]
    }

    static func tusOffset() -> [(String, String)] { [("Tus-Resumable", tusVersion)] }

    static func tusAppend(offset: Int64) -> [(String, String)] {
        [("Tus-Resumable", tusVersion), ("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")]
    }

    // MARK: IETF resumable uploads

    /// Creation without content: AsyncHTTPClient does not surface the informational 104
    /// response that would carry the upload's URL mid-request, so the resource is created
    /// first (`Upload-Complete: ?0`) and the content appended with PATCH.
    static func ietfCreation(size: Int64) -> [(String, String)] {
        [
            ("Upload-Draft-Interop-Version", ietfInteropVersion), ("Upload-Complete", "?0"), ("Upload-Length", String(size)),
            ("Content-Length", "0"),
        ]
    }

    static func ietfOffset() -> [(String, String)] { [("Upload-Draft-Interop-Version", ietfInteropVersion)] }

    static func ietfAppend(offset: Int64) -> [(String, String)] {
        [
            ("Upload-Draft-Interop-Version", ietfInteropVersion), ("Upload-Offset", String(offset)), ("Upload-Complete", "?1"),
            ("Content-Type", "application/partial-upload"),
        ]
    }

    /// `Upload-Offset` of an offset answer; nil when missing or malformed.
    static func offset(_ headers: [(name: String, value: String)]) -> Int64? {
        headers.first { $0.name.lowercased() == "upload-offset" }.flatMap { Int64($0.value.trimmingCharacters(in: .whitespaces)) }
            .flatMap { $0 >= 0 ? $0 : nil }
    }

    // MARK: multipart/form-data

    /// The parts around the file: `--boundary`, the part's headers, then after the file the
    /// closing boundary.
    struct Multipart: Sendable {
        let boundary: String
        let preamble: Data
        let epilogue: Data

        init(field: String, fileName: String, contentType: String, boundary: String = "ferry-" + UUID().uuidString) {
            self.boundary = boundary
            func quoted(_ text: String) -> String {
                text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    .replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "")
            }
            preamble = Data((
                "--\(boundary)\r\n"
                    + "Content-Disposition: form-data; name=\"\(quoted(field))\"; filename=\"\(quoted(fileName))\"\r\n"
                    + "Content-Type: \(contentType)\r\n\r\n"
            ).utf8)
            epilogue = Data("\r\n--\(boundary)--\r\n".utf8)
        }

        var contentType: String { "multipart/form-data; boundary=\(boundary)" }
    }
}
