import FerryModel
import Foundation

/// The fields a transfer's row keeps as JSON text, the same in either journal.
extension TransferRecord {
    /// This transfer's own options.
    var transferOptions: TransferOptions? {
        get { Self.decoded(options) }
        set { options = Self.encoded(newValue) }
    }

    /// `options` as the row keeps them: nil for none. A batch of transfers that share them
    /// encodes them once.
    static func encoded(_ options: TransferOptions?) -> String? {
        options.flatMap { $0.isEmpty ? nil : try? String(decoding: encoder.encode($0), as: UTF8.self) }
    }

    static func decoded(_ options: String?) -> TransferOptions? {
        options.flatMap { try? decoder.decode(TransferOptions.self, from: Data($0.utf8)) }
    }

    /// The recorded upload response, if any.
    var uploadResponse: UploadResponse? {
        guard let responseStatus else { return nil }
        let headers = responseHeaders.flatMap { try? Self.decoder.decode([String: String].self, from: Data($0.utf8)) } ?? [:]
        return UploadResponse(
            status: responseStatus, headers: headers, body: responseBody,
            bodyTruncated: (responseBody?.utf8.count ?? 0) >= RecordedResponse.maxBodyBytes
        )
    }

    private static let encoder = FerryJSON.encoder()
    private static let decoder = FerryJSON.decoder()
}
