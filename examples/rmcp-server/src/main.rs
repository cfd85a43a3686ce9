//! The calc server over stdio, as tests/servers/rmcp-calc serves it.

use rmcp::ServiceExt;
use wirefuzz_example_rmcp::Calc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = match Calc::default().serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    service.waiting().await?;
    Ok(())
}
