import FerryKit
import HTTPTypes

/// What a member's login or token may ask of the API: listen, subscribe and download into the
/// shared library, and manage their own sessions, tokens and password. Everything else is
/// refused (403): the daemon's settings, other users, shutdown, the browser extension's pairing,
/// uploads (they read a file of the server's), and the transfers' bulk actions; a route added
/// later is closed to members until it is named here. Pure: a method and a path in, a verdict out.
enum MemberAccess {
    /// True when a member named `user` may make this request (a transfer's owner is checked by
    /// its route).
    /// - Parameter path: the request's path without its query (`/v1/transfers/12`).
    static func allows(_ method: HTTPRequest.Method, path: String, user: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard parts.first == "v1" else { return false }
        let rest = Array(parts.dropFirst()).map(String.init)
        if rest.first == "users" { return rest.count >= 2 && rest[1] == user && ownAccount(method, Array(rest.dropFirst(2))) }
        switch method {
        case .get, .head: return reads(rest)
        case .post: return posts(rest)
        case .put:
            return rest == ["up-next"] || (rest.count == 3 && ["episodes", "tracks"].contains(rest[0]) && rest[2] == "playback")
                || (rest.count == 3 && rest[0] == "playlists" && rest[2] == "items")
        case .patch: return rest.count == 2 && ["podcasts", "transfers", "bookmarks", "playlists"].contains(rest[0])
        case .delete: return rest == ["session"] || (rest.count == 2 && ["podcasts", "transfers", "bookmarks", "playlists"].contains(rest[0]))
        default: return false
        }
    }

    /// The message of the 403 for anything else.
    static let refusal = "A member may listen, subscribe and download, and change their own password, sessions and tokens; ask an admin for the rest."

    private static func reads(_ rest: [String]) -> Bool {
        switch rest.first {
        case "status", "me", "transfers", "catalog", "podcasts", "episodes", "tracks", "up-next", "bookmarks", "playlists", "transcripts", "events", "openapi.yaml":
            // A transfer's resume data carries its request's headers.
            return !(rest.count == 3 && rest[0] == "transfers" && rest[2] == "resume-data")
        default:
            return false
        }
    }

    private static func posts(_ rest: [String]) -> Bool {
        switch rest.count {
        case 1: return ["transfers", "podcasts", "playlists"].contains(rest[0])
        case 2: return rest == ["catalog", "previews"] || rest == ["podcasts", "import"] || rest == ["podcasts", "refresh"] || rest == ["playlists", "move"]
        case 3:
            return (rest[0] == "transfers" && ["pause", "resume", "cancel"].contains(rest[2]))
                || (rest[0] == "podcasts" && ["played", "refresh", "seen"].contains(rest[2]))
                || (rest[0] == "episodes" && rest[2] == "download")
                || (["episodes", "tracks"].contains(rest[0]) && rest[2] == "bookmarks")
                || (rest[0] == "playlists" && rest[2] == "items")
        default: return false
        }
    }

    /// `/v1/users/{self}…`: their own account, sessions and tokens (not their role: an admin's).
    private static func ownAccount(_ method: HTTPRequest.Method, _ rest: [String]) -> Bool {
        switch (method, rest.first) {
        case (.get, nil), (.patch, nil): return true
        case (.get, "sessions"), (.delete, "sessions"), (.get, "tokens"), (.post, "tokens"), (.delete, "tokens"): return rest.count <= 2
        default: return false
        }
    }
}
