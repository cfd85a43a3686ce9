//! The note store over stdio, as its author ships it; `NOTES_BUG` plants one bug (see the library).

use rmcp::ServiceExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notes = rmcp_notes::Notes::with_bug(rmcp_notes::Bug::from_env()?);
    let service = match notes.serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    service.waiting().await?;
    Ok(())
}
