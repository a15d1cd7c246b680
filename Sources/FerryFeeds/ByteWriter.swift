/// A growable byte buffer for the feed code's inner loops (HTML sanitising, plain text).
///
/// `[UInt8].append` costs around a hundred nanoseconds a byte in debug builds, where the tests
/// run; a feed's show notes can be tens of megabytes. This writes through a pointer and copies
/// runs in bulk, and frees its memory itself.
struct ByteWriter: ~Copyable {
    private var pointer: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        pointer = .allocate(capacity: self.capacity)
    }

    deinit {
        pointer.deallocate()
    }

    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        pointer[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (pointer + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    var string: String {
        String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: pointer, count: count)
        pointer.deallocate()
        pointer = grown
        capacity = newCapacity
    }
}
