import FerryCore
import FerryFeeds
import FerryKit
import Foundation

/// aria2's JSON-RPC (https://aria2.github.io/manual/en/html/aria2c.html#rpc-interface) over
/// Ferry's engine, so aria2's front ends and client libraries drive Ferry without being told:
/// its method names, parameters, results (numbers as strings) and error objects. Every transfer
/// is one aria2 download (GID: its id in hex), whoever added it; those added here belong to the
/// session `aria2`.
struct Aria2RPC: Sendable {
    let engine: TransferEngine
    /// The `token:SECRET` every call's first parameter must carry.
    let secret: String
    /// Answers `aria2.getSessionInfo`; new with each daemon.
    let sessionId: String

    static let session = "aria2"
    /// The aria2 release whose interface this follows (front ends look at it for features).
    static let version = "1.37.0"

    static let methods = [
        "aria2.addUri", "aria2.addMetalink", "aria2.remove", "aria2.forceRemove", "aria2.pause", "aria2.forcePause", "aria2.pauseAll",
        "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll", "aria2.tellStatus", "aria2.getUris", "aria2.getFiles",
        "aria2.tellActive", "aria2.tellWaiting", "aria2.tellStopped", "aria2.changePosition", "aria2.getGlobalStat", "aria2.purgeDownloadResult",
        "aria2.removeDownloadResult", "aria2.getVersion", "aria2.getSessionInfo", "aria2.saveSession",
        "aria2.getOption", "aria2.changeOption", "aria2.getGlobalOption", "aria2.changeGlobalOption",
        "system.multicall", "system.listMethods", "system.listNotifications",
    ]
    /// What aria2 does and Ferry does not: answered with aria2's error for them.
    static let unsupported: [String: String] = [
        "aria2.addTorrent": "Ferry downloads over HTTP(S): it has no BitTorrent.",
        "aria2.getPeers": "Ferry has no BitTorrent peers.",
    ]
    static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete", "aria2.onDownloadError",
        "aria2.onBtDownloadComplete",
    ]

    /// aria2's error object: code 1 for what the call asked, the JSON-RPC codes for the envelope.
    struct Failure: Error {
        var code: Int
        var message: String

        static func aria2(_ message: String) -> Failure { Failure(code: 1, message: message) }
        static let parse = Failure(code: -32700, message: "Parse error.")
        static let invalidRequest = Failure(code: -32600, message: "Invalid Request.")
        static let unauthorized = Failure.aria2("Unauthorized")
    }

    // MARK: The envelope

    /// The answer to a POST body: one response, or a list for a batch; with aria2's HTTP
    /// status: 200, 400 for a single call's error, 500 for a body that is not JSON.
    func answer(_ body: Data) async -> (status: Int, body: Data) {
        guard let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
            return (500, Self.encode(Self.response(id: NSNull(), failure: .parse)))
        }
        if let batch = json as? [Any] {
            var responses: [[String: Any]] = []
            for call in batch { responses.append(await respond(to: call)) }
            return (200, Self.encode(responses))
        }
        let response = await respond(to: json)
        return (response["error"] == nil ? 200 : 400, Self.encode(response))
    }

    /// One call's response object.
    func respond(to call: Any) async -> [String: Any] {
        guard let object = call as? [String: Any], let method = object["method"] as? String else {
            return Self.response(id: (call as? [String: Any])?["id"] ?? NSNull(), failure: .invalidRequest)
        }
        let id = object["id"] ?? NSNull()
        let params: [Any]
        switch object["params"] {
        case nil, is NSNull: params = []
        case let list as [Any]: params = list
        default: return Self.response(id: id, failure: .invalidRequest)
        }
        do {
            return ["id": id, "jsonrpc": "2.0", "result": try await self.call(method, params)]
        } catch let failure as Failure {
            return Self.response(id: id, failure: failure)
        } catch let error as FerryError {
            return Self.response(id: id, failure: .aria2(error.message))
        } catch {
            return Self.response(id: id, failure: .aria2("\(error)"))
        }
    }

    static func response(id: Any, failure: Failure) -> [String: Any] {
        ["id": id, "jsonrpc": "2.0", "error": ["code": failure.code, "message": failure.message]]
    }

    static func encode(_ value: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    // MARK: Calls

    /// Runs one method; `params` still carries the token.
    func call(_ method: String, _ params: [Any]) async throws -> Any {
        switch method {
        case "system.listMethods": return Self.methods + Self.unsupported.keys.sorted()
        case "system.listNotifications": return Self.notifications
        case "system.multicall": return try await multicall(params)
        default: break
        }
        var arguments = Arguments(params)
        guard let token = arguments.token(), token == secret else { throw Failure.unauthorized }
        if let reason = Self.unsupported[method] { throw Failure.aria2(reason) }
        if method == "aria2.addUri" { return try await addUri(&arguments) }
        if method == "aria2.addMetalink" { return try await addMetalink(&arguments) }
        if let answer = try await command(method, &arguments) { return answer }
        if let answer = try await query(method, &arguments) { return answer }
        return try await global(method, &arguments)
    }

    /// The methods that change one download or all of them; nil for another method.
    private func command(_ method: String, _ arguments: inout Arguments) async throws -> Any? {
        switch method {
        case "aria2.remove", "aria2.forceRemove":
            let (id, gid) = try await find(try arguments.gid())
            let current = try await self.transfer(id)
            guard !current.state.isFinal else { throw Failure.aria2("Active Download not found for GID#\(gid)") }
            _ = try await engine.cancel(id)
            // As aria2: one that never started leaves no result behind.
            if current.attempts == 0 { try await engine.remove(id, deleteFile: false) }
            return gid
        case "aria2.pause", "aria2.forcePause":
            let (id, gid) = try await find(try arguments.gid())
            let current = try await self.transfer(id)
            guard [.queued, .running, .waiting].contains(current.state) else {
                throw Failure.aria2("GID#\(gid) cannot be paused now")
            }
            _ = try await engine.pause(id)
            return gid
        case "aria2.unpause":
            let (id, gid) = try await find(try arguments.gid())
            guard try await self.transfer(id).state == .paused else {
                throw Failure.aria2("GID#\(gid) cannot be unpaused now")
            }
            _ = try await engine.resume(id)
            return gid
        case "aria2.pauseAll", "aria2.forcePauseAll":
            _ = try await engine.pauseAll(session: nil)
            return "OK"
        case "aria2.unpauseAll":
            _ = try await engine.resumeAll(session: nil)
            return "OK"
        case "aria2.removeDownloadResult":
            let (id, gid) = try await find(try arguments.gid())
            guard try await self.transfer(id).state.isFinal else {
                throw Failure.aria2("Could not remove download result of GID#\(gid)")
            }
            try await engine.remove(id, deleteFile: false)
            return "OK"
        case "aria2.changeOption":
            let (id, gid) = try await find(try arguments.gid())
            guard try await self.transfer(id).state.isFinal == false else {
                throw Failure.aria2("Cannot change option of GID#\(gid): it has stopped")
            }
            _ = try await engine.updateOptions(id, try Aria2Options.update(arguments.next() ?? [String: Any]()))
            return "OK"
        default: return nil
        }
    }

    /// The methods that describe downloads; nil for another method.
    private func query(_ method: String, _ arguments: inout Arguments) async throws -> Any? {
        switch method {
        case "aria2.tellStatus":
            let (id, gid) = try await find(try arguments.gid())
            let download = try await transfer(id)
            return Aria2Status.object(download, gid: gid, place: await place(of: download), keys: try arguments.keys())
        case "aria2.getUris": return Aria2Status.uris(try await transfer(try await find(try arguments.gid()).id))
        case "aria2.getFiles":
            let download = try await self.transfer(try await find(try arguments.gid()).id)
            return Aria2Status.files(download, place: await place(of: download))
        case "aria2.tellActive":
            let keys = try arguments.keys()
            return await describe(try await downloads(in: [.running]), keys: keys)
        case "aria2.tellWaiting", "aria2.tellStopped":
            let (offset, count) = (try arguments.integer("offset"), try arguments.integer("num"))
            let keys = try arguments.keys()
            let states: Set<TransferState> = method == "aria2.tellWaiting" ? [.queued, .waiting, .paused] : [.completed, .failed, .cancelled]
            return await describe(Self.page(try await downloads(in: states), offset: offset, count: count), keys: keys)
        case "aria2.changePosition": return try await changePosition(&arguments)
        case "aria2.getOption":
            let (id, _) = try await find(try arguments.gid())
            return await options(of: try await self.transfer(id))
        default: return nil
        }
    }

    /// The daemon's own methods: statistics, global options, version, session.
    private func global(_ method: String, _ arguments: inout Arguments) async throws -> Any {
        switch method {
        case "aria2.getGlobalStat": return try await globalStat()
        case "aria2.purgeDownloadResult":
            _ = try await engine.removeFinished(session: nil)
            return "OK"
        case "aria2.getGlobalOption": return try await globalOptions()
        case "aria2.changeGlobalOption":
            guard let changes = arguments.next() as? [String: Any] else { throw Failure.aria2("The options are an object of names and values.") }
            try await changeGlobalOptions(changes)
            return "OK"
        case "aria2.getVersion":
            return ["version": Self.version, "enabledFeatures": ["Async DNS", "GZip", "HTTPS", "Message Digest"], "ferry": FerryVersion.current]
        case "aria2.getSessionInfo": return ["sessionId": sessionId]
        case "aria2.saveSession": return "OK"  // The journal is always saved.
        default: throw Failure.aria2("No such method: \(method)")
        }
    }

    /// `system.multicall([{methodName, params}, ...])`: each call's result in a list of one, or its error object.
    private func multicall(_ params: [Any]) async throws -> Any {
        guard let calls = params.first as? [Any] else { throw Failure.aria2("system.multicall takes a list of {methodName, params}.") }
        var results: [Any] = []
        for entry in calls {
            guard let call = entry as? [String: Any], let method = call["methodName"] as? String, method != "system.multicall" else {
                results.append(["code": 1, "message": "Each call of system.multicall needs a methodName (and not system.multicall)."])
                continue
            }
            do {
                results.append([try await self.call(method, call["params"] as? [Any] ?? [])])
            } catch let failure as Failure {
                results.append(["code": failure.code, "message": failure.message])
            } catch let error as FerryError {
                results.append(["code": 1, "message": error.message])
            }
        }
        return results
    }

    /// `aria2.changePosition(gid, pos, how)`: a waiting download to `pos` from the head
    /// (`POS_SET`), from where it is (`POS_CUR`) or from the last place (`POS_END`), held within
    /// the queue; its place afterwards.
    private func changePosition(_ arguments: inout Arguments) async throws -> Int {
        let (id, gid) = try await find(try arguments.gid())
        let offset = try arguments.integer("pos")
        let how = arguments.next() as? String
        guard ["POS_SET", "POS_CUR", "POS_END"].contains(how) else { throw Failure.aria2("Illegal argument.") }
        let placed = try await engine.place(id, kind: .download) { current, count in
            how == "POS_SET" ? offset : how == "POS_CUR" ? current + offset : count - 1 + offset
        }
        guard let placed else { throw Failure.aria2("GID#\(gid) not found in the waiting queue.") }
        return placed
    }

    private func addUri(_ arguments: inout Arguments) async throws -> String {
        guard let uris = arguments.next() as? [Any], !uris.isEmpty, let texts = uris as? [String] else {
            throw Failure.aria2("aria2.addUri takes a list of URIs (of the same file).")
        }
        let options = try Aria2Options(arguments.next() ?? [String: Any]())
        let urls = try texts.map { text throws(FerryError) in try TransferURL.validate(text) }
        if let gid = options.gid, try await engine.local.aria2GIDTaken(gid) { throw Failure.aria2("GID \(gid) is not unique.") }
        // With a GID of its own, it is added paused and resumed once it has it, so that no
        // notification names it otherwise.
        let transfer = try await engine.enqueue(
            .init(
                urls: [urls[0]], session: Self.session, force: true, options: options.transferOptions, mirrors: Array(urls.dropFirst()),
                directory: options.directory, createDirectory: options.directory != nil, outputName: options.name,
                checksum: options.checksum, paused: options.paused || options.gid != nil
            )
        )[0]
        guard let gid = options.gid else { return Aria2GID.gid(transfer.id) }
        do {
            try await engine.local.setAria2GID(gid, for: transfer.id)
        } catch {
            try? await engine.remove(transfer.id, deleteFile: false)  // Taken meanwhile.
            throw Failure.aria2("GID \(gid) is not unique.")
        }
        if !options.paused { _ = try await engine.resume(transfer.id) }
        return gid
    }

    /// A download of each file of a Metalink (given in base64, as aria2 takes it), as
    /// `POST /v1/transfers` with `metalink` makes them; their GIDs, in the document's order.
    private func addMetalink(_ arguments: inout Arguments) async throws -> [String] {
        guard let text = arguments.next() as? String, let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            throw Failure.aria2("aria2.addMetalink takes a Metalink document in base64.")
        }
        let options = try Aria2Options(arguments.next() ?? [String: Any]())
        guard options.gid == nil, options.name == nil, options.checksum == nil else {
            throw Failure.aria2("A Metalink names its files and digests: gid, out and checksum do not apply to it.")
        }
        let metalink = try Metalink.parse(data)
        let request = CreateTransfersRequest(
            force: true, options: options.transferOptions, directory: options.directory, createDirectory: options.directory != nil, paused: options.paused
        )
        var gids: [String] = []
        for download in try MetalinkDownloads.requests(for: metalink, request, session: Self.session, locations: options.metalinkLocations) {
            gids += try await engine.enqueue(download).map { Aria2GID.gid($0.id) }
        }
        return gids
    }

    /// The transfer a GID names (a chosen one, or Ferry's own), with the GID to show.
    private func find(_ gid: String) async throws -> (id: Int64, gid: String) {
        if let id = try await engine.local.transferId(aria2GID: gid) { return (id, gid) }
        guard let id = Aria2GID.id(gid) else { throw Failure.aria2("GID \(gid) is not found") }
        return (id, await self.gid(id))
    }

    /// A transfer's GID: the one its client chose, or its id in hex.
    func gid(_ id: Int64) async -> String {
        (try? await engine.local.aria2GIDs(of: [id]))?[id] ?? Aria2GID.gid(id)
    }

    /// A download's options as aria2 names them (the ones Ferry has).
    private func options(of transfer: Transfer) async -> [String: String] {
        var options = ["dir": await place(of: transfer).directory]
        let record = try? await engine.journal.transfer(id: transfer.id)
        if let name = record?.outputName { options["out"] = name }
        if let rate = transfer.options?.bytesPerSecond { options["max-download-limit"] = String(rate) }
        if let connections = transfer.options?.connections { options["split"] = String(connections) }
        if let checksum = transfer.checksum { options["checksum"] = checksum.description }
        if let headers = transfer.options?.headers, !headers.isEmpty {
            options["header"] = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        }
        return options
    }

    /// The daemon's settings as aria2's global options.
    private func globalOptions() async throws -> [String: String] {
        let daemon = try await engine.options(session: nil)
        return [
            "dir": engine.library.absolutePath("Downloads"),
            "max-concurrent-downloads": String(daemon.maxConcurrent ?? engine.configuration.maxConcurrent),
            "max-overall-download-limit": String(daemon.bytesPerSecond ?? 0),
            "max-connection-per-server": String(daemon.maxConnectionsPerHost ?? 16),
            "continue": "true",
        ]
    }

    /// `max-overall-download-limit` and `max-concurrent-downloads` change the daemon's; any
    /// other option is refused whole.
    private func changeGlobalOptions(_ changes: [String: Any]) async throws {
        var set = TransferOptions()
        var clear: [String] = []
        for (key, value) in changes {
            let text = (value as? String) ?? (value as? NSNumber)?.stringValue ?? ""
            switch key {
            case "max-overall-download-limit":
                let rate = try Aria2Options.rate(text, option: key)
                if rate == 0 { clear.append("bytesPerSecond") } else { set.bytesPerSecond = rate }
            case "max-concurrent-downloads":
                guard let count = Int(text), (1...256).contains(count) else {
                    throw Failure.aria2("We encountered a problem while processing the option '--\(key)'.")
                }
                set.maxConcurrent = count
            default:
                throw Failure.aria2("Ferry does not change the option '--\(key.prefix(60))' (it changes max-overall-download-limit and max-concurrent-downloads).")
            }
        }
        _ = try await engine.updateOptions(session: nil, TransferOptionsUpdate(set: set, clear: clear.isEmpty ? nil : clear))
    }

    private func transfer(_ id: Int64) async throws -> Transfer {
        do {
            return try await engine.transfer(id)
        } catch let error as FerryError where error.code == .notFound {
            throw Failure.aria2("GID \(Aria2GID.gid(id)) is not found")
        }
    }

    private func describe(_ transfers: [Transfer], keys: [String]) async -> [[String: Any]] {
        let chosen = (try? await engine.local.aria2GIDs(of: transfers.map(\.id))) ?? [:]
        var objects: [[String: Any]] = []
        for transfer in transfers {
            objects.append(Aria2Status.object(transfer, gid: chosen[transfer.id] ?? Aria2GID.gid(transfer.id), place: await place(of: transfer), keys: keys))
        }
        return objects
    }

    /// The file's path once known (its own name, or the one it was given), and its folder.
    private func place(of transfer: Transfer) async -> Aria2Status.Place {
        let record = try? await engine.journal.transfer(id: transfer.id)
        let folder = transfer.directory ?? engine.library.absolutePath(transfer.folder)
        let path = transfer.path ?? (record?.fileName ?? record?.outputName).map { "\(folder)/\($0)" } ?? ""
        return Aria2Status.Place(path: path, directory: path.isEmpty ? folder : (path as NSString).deletingLastPathComponent)
    }

    /// Downloads in these states: waiting ones in the order they will start, as aria2 lists its
    /// queue; others in the order they were added.
    private func downloads(in states: Set<TransferState>) async throws -> [Transfer] {
        let transfers = try await engine.list(states: states).transfers.filter { $0.kind == .download }
        guard states.contains(.queued) else { return transfers }
        let byId = Dictionary(uniqueKeysWithValues: transfers.map { ($0.id, $0) })
        return try await engine.waitingOrder(kind: .download).compactMap { byId[$0.transferId] }
    }

    private func globalStat() async throws -> [String: Any] {
        let all = try await engine.list().transfers.filter { $0.kind == .download }
        let active = all.filter { $0.state == .running }
        let speed = active.reduce(0) { $0 + Int64($1.bytesPerSecond ?? 0) }
        let stopped = all.filter(\.state.isFinal).count
        return [
            "downloadSpeed": String(speed), "uploadSpeed": "0", "numActive": String(active.count),
            "numWaiting": String(all.filter { [.queued, .waiting, .paused].contains($0.state) }.count),
            "numStopped": String(stopped), "numStoppedTotal": String(stopped),
        ]
    }

    /// aria2's `offset`/`num`: from the start, or with a negative offset from the end, backwards.
    static func page<T>(_ items: [T], offset: Int, count: Int) -> [T] {
        guard count > 0, !items.isEmpty else { return [] }
        if offset >= 0 {
            guard offset < items.count else { return [] }
            return Array(items[offset..<min(items.count, offset + count)])
        }
        let start = items.count + offset
        guard start >= 0 else { return [] }
        return Array(items[max(0, start - count + 1)...start].reversed())
    }
}

/// A call's parameters, read in order, after its `token:SECRET`.
struct Aria2Arguments {
    private var values: [Any]

    init(_ values: [Any]) { self.values = values }

    /// The secret of a leading `token:...`, taken off the list.
    mutating func token() -> String? {
        guard let first = values.first as? String, first.hasPrefix("token:") else { return nil }
        values.removeFirst()
        return String(first.dropFirst(6))
    }

    mutating func next() -> Any? {
        values.isEmpty ? nil : values.removeFirst()
    }

    /// A GID's text, checked for its form (the RPC finds what it names).
    mutating func gid() throws -> String {
        guard let text = next() as? String else { throw Aria2RPC.Failure.aria2("The first parameter is a GID.") }
        guard Aria2GID.isWellFormed(text) else { throw Aria2RPC.Failure.aria2("Invalid GID \(text.prefix(40))") }
        return text.lowercased()
    }

    mutating func integer(_ name: String) throws -> Int {
        guard let value = next() as? Int else { throw Aria2RPC.Failure.aria2("\(name) is a number.") }
        return value
    }

    /// Optional `keys` (a list of names) at the end.
    mutating func keys() throws -> [String] {
        guard let value = next() else { return [] }
        guard let keys = value as? [String] else { throw Aria2RPC.Failure.aria2("keys is a list of names.") }
        return keys
    }
}

typealias Arguments = Aria2Arguments
