import FerryModel
/// The resume protocol as a pure decision (DESIGN: "The transfer protocol").
///
/// Made from what the journal knows before a request; it says which headers to send, then
/// judges the response: keep the bytes on disk and append, start over with this same response,
/// start over with a new request, or recognise that the file is already complete.
package struct ResumePlan: Sendable, Hashable {
    /// Bytes on disk that the request asks the server to continue after.
    package let offset: Int64
    /// The `If-Range` value, when resuming.
    package let validator: String?
    /// The total size recorded earlier, if any.
    package let knownTotal: Int64?
    /// Set when bytes were on disk but cannot be trusted: why the transfer starts over.
    package let discardReason: String?

    package init(durableBytes: Int64, knownTotal: Int64?, validator: String?) {
        self.knownTotal = knownTotal
        if durableBytes > 0, let validator {
            offset = durableBytes
            self.validator = validator
            discardReason = nil
        } else {
            offset = 0
            self.validator = nil
            discardReason = durableBytes > 0
                ? "the server gave no ETag or Last-Modified date, so the \(durableBytes) bytes on disk cannot be proven current"
                : nil
        }
    }

    /// `Range` and `If-Range` when resuming; nothing when starting from zero.
    package var requestHeaders: [(name: String, value: String)] {
        guard offset > 0, let validator else { return [] }
        return [("Range", "bytes=\(offset)-"), ("If-Range", validator)]
    }

    /// What a 200, 206 or 416 response says.
    package struct Response: Sendable, Hashable {
        package var status: Int
        package var contentRange: String?
        package var contentLength: Int64?
        /// The response's own validator (see ``Validator``).
        package var validator: String?

        package init(status: Int, contentRange: String? = nil, contentLength: Int64? = nil, validator: String? = nil) {
            self.status = status
            self.contentRange = contentRange
            self.contentLength = contentLength
            self.validator = validator
        }
    }

    package enum Outcome: Sendable, Hashable {
        /// Keep `from` bytes, append this response's body; `total` is the complete size if known.
        /// `restartReason` is set when `from` is 0 although bytes were on disk.
        case write(from: Int64, total: Int64?, restartReason: String?)
        /// The file on disk is already whole (416 at offset == total).
        case complete(total: Int64)
        /// Discard this response and the bytes on disk; request again from zero.
        case startOver(reason: String)
    }

    package func evaluate(_ response: Response) -> Outcome {
        switch response.status {
        case 206:
            guard let header = response.contentRange, let range = ContentRange(header), let bytes = range.range else {
                return .startOver(reason: "the server sent a partial response without a usable Content-Range")
            }
            guard bytes.lowerBound == offset else {
                return .startOver(reason: "the server sent bytes from \(bytes.lowerBound) when asked for \(offset)")
            }
            if let knownTotal, let total = range.total, total != knownTotal {
                return .startOver(reason: "the file's size changed from \(knownTotal) to \(total) bytes")
            }
            return .write(from: offset, total: range.total ?? knownTotal, restartReason: nil)
        case 416:
            let total = response.contentRange.flatMap(ContentRange.init)?.total
            if offset > 0, let total, total == offset, knownTotal == nil || knownTotal == total {
                return .complete(total: total)
            }
            return .startOver(reason: "the server refused the range request (416)")
        default:  // 200 and any other 2xx: the whole file.
            let reason: String?
            if offset == 0 {
                reason = nil
            } else if let new = response.validator, new != validator {
                reason = "the file changed on the server (validator \(validator ?? "none") is now \(new))"
            } else {
                reason = "the server ignored the range request and sent the whole file"
            }
            return .write(from: 0, total: response.contentLength, restartReason: reason)
        }
    }
}
