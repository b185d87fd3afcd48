# Baton in a container: a static binary on a small non-root image.
#   docker build -t baton . && docker run -p 7070:7070 baton
# Inside the container Baton listens on 0.0.0.0:7070, so it requires a token: it prints the URL
# with the token at start (or pass --token). Runs are kept in /data/baton.db; mount a volume there
# to keep them across containers: docker run -p 7070:7070 -v baton-data:/data baton
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/baton . && mkdir /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/baton /baton
COPY --from=build --chown=65532:65532 /out/data /data
USER nonroot:nonroot
VOLUME /data
EXPOSE 7070
ENTRYPOINT ["/baton"]
CMD ["serve", "--addr", "0.0.0.0:7070", "--db", "/data/baton.db"]
