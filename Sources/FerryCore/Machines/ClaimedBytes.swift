/// What a member does with the bytes of a transfer it claimed from another: they count if the
/// part file is here (the library on storage every member shares); otherwise the transfer
/// starts from zero, and says why. Pure: the engine stats the file and journals the hand-over.
enum ClaimedBytes: Sendable, Hashable {
    /// Nothing to decide (an upload, no bytes yet), or the bytes are here.
    case keep
    /// The journaled bytes are not here: journal a hand-over and start from zero.
    case startOver

    /// - Parameters:
    ///   - record: the claimed transfer as journaled by its last member.
    ///   - partLength: the part file's length here, 0 when there is none.
    init(_ record: TransferRecord, partLength: Int64) {
        // One whose name is reserved is the interrupted move's to settle (its part file may be in place).
        guard record.kind == .download, record.fileName == nil, record.durableBytes > 0 || record.segments != nil else {
            self = .keep
            return
        }
        // A segmented download's ranges lie anywhere in the file: only a missing file is doubted.
        let here = record.segments == nil ? partLength >= record.durableBytes : partLength > 0
        self = here ? .keep : .startOver
    }
}
