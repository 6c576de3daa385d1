// DynamoDB Local on 127.0.0.1 only (infra/local/dynamodb_local.py starts it).
//
// DynamoDB Local's own entry point (ServerRunner) has no option for the address: its Jetty
// server listens on every interface. This one builds the server from the same command line,
// points its connectors at the loopback address before they open, and starts it. The
// classpath holds DynamoDBLocal.jar (its manifest brings DynamoDBLocal_lib/). Telemetry is
// left off: pass -disableTelemetry as well. The server ends when the process that started it
// does, however that one ended (a test session or a stack killed before it could stop it):
// a local DynamoDB never outlives what it serves.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class DynamoDBLocalOnLoopback {
    private DynamoDBLocalOnLoopback() {}

    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) {
            throw new IllegalStateException("DynamoDB Local's server has no connector to bind");
        }
        for (Connector connector : connectors) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        proxy.start();
        ProcessHandle.current()
                .parent()
                .ifPresent(parent -> parent.onExit().thenRun(() -> Runtime.getRuntime().halt(0)));
    }
}
