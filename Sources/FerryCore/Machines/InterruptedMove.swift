/// A transfer whose final name is journaled but which is not completed: its daemon (or, in a
/// cluster, its member) stopped between reserving the name and journaling the completion. What
/// the files say decides, once, whether the move is finished now or the transfer runs again;
/// a second download is never placed beside the first under `name (2)`.
enum InterruptedMove {
    /// What the disk shows of the part file and of the reserved name.
    struct Facts: Sendable, Hashable {
        var partExists: Bool
        var targetExists: Bool
        /// Both names are one file (the hard link was made, the part not yet unlinked).
        var sameFile: Bool
        /// The reserved file's size, if it is there.
        var targetSize: Int64?
        /// The size journaled with the name.
        var expectedSize: Int64?
    }

    enum Decision: Sendable, Hashable {
        /// The link was made: the part file's name goes; the transfer is complete.
        case unlinkPart
        /// The part file is whole and the name free: link it there, then it is complete.
        case link
        /// The move was done: the file is in place at its size; the transfer is complete.
        case placed
        /// Nothing to finish: the name is forgotten and the transfer runs again, from its part
        /// file if there is one, else from zero.
        case runAgain(keepsBytes: Bool)
    }

    static func decide(_ facts: Facts) -> Decision {
        switch (facts.partExists, facts.targetExists) {
        case (true, true) where facts.sameFile: .unlinkPart
        case (true, false): .link
        case (false, true) where facts.expectedSize != nil && facts.targetSize == facts.expectedSize: .placed
        // The name holds another file (another download's, or the user's): this one runs again
        // and is named anew.
        case (true, true): .runAgain(keepsBytes: true)
        case (false, _): .runAgain(keepsBytes: false)
        }
    }
}
