import FerryKit
import Foundation
import HTTPTypes
import Hummingbird

/// `/ca.pem` (Ferry's CA certificate, for a device to trust once, from the login page) and
/// `GET /v1/remote` (where the listeners beyond loopback answer, for `ferry remote`).
struct RemoteRoutes {
    let listeners: RemoteListeners?

    func registerPublic(on router: Router<FerryRequestContext>) {
        router.get("ca.pem") { _, _ in
            guard let authority = listeners?.authority, let pem = try? authority.caCertificatePEM() else {
                throw FerryError(.notFound, "Ferry's certificate authority is not in use: the listeners use a certificate of yours, or there are none.")
            }
            return Response(
                status: .ok,
                headers: [.contentType: "application/x-x509-ca-cert", .contentDisposition: #"attachment; filename="ferry-ca.crt""#, .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: pem))
            )
        }
    }

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("remote") { _, context in
            guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin sees the listeners' settings.") }
            guard let listeners else {
                throw FerryError(.notFound, "Ferry answers on loopback only: `ferry remote enable --listen 0.0.0.0:8443` opens it to the network.")
            }
            return try jsonResponse(listeners.status())
        }
    }
}
