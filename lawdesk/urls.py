from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from matters.admin import own_password_change

# The admin says whose it is: its default header reads "Django administration".
admin.site.site_header = "LawDesk administration"
admin.site.site_title = "LawDesk administration"
admin.site.index_title = "Records: people, matters, model topology"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/password_change/", own_password_change, name="admin_password_change"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's JSON views, error pages).
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("", include("pipeline.urls")),
    path("", include("matters.urls")),
]
